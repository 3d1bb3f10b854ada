import { Cron } from 'croner';

/**
 * EventBridge Scheduler's recurring expressions, the one parser of the platform: the manifest's
 * static schedules and users' cron jobs mean the same timetable in the cloud and locally.
 *
 * - `rate(N minute|minutes|hour|hours|day|days)`, singular only for 1.
 * - `cron(minutes hours day-of-month month day-of-week year)` in a time zone (UTC unless given).
 *   Per field, as AWS documents them: minutes, hours, month and year take `, - * /`; day-of-month
 *   `, - * ? / L W` (`L`, `LW`, `15W`); day-of-week `, - * ? L #` (`L` = Saturday, `6L` = the
 *   last Friday, `2#1` = the first Monday), numbered 1 (SUN) to 7 (SAT). Exactly one of
 *   day-of-month and day-of-week is `?`.
 *
 * This module checks the grammar itself (so refusals name the field and say why) and leaves the
 * calendar to croner, a maintained library with `L`, `W`, `#`, a year field and IANA zones, given
 * the expression translated to its 7-field Quartz form. Daylight saving time follows AWS's rule: a
 * wall time that does not exist (spring forward) is skipped, and one that happens twice (fall
 * back) fires once.
 */

/** A timetable: the first fire time strictly after a moment. */
export interface Timetable {
  readonly expression: string;
  /** The IANA zone cron fields are read in (rates ignore it). */
  readonly timezone: string;
  /**
   * Null when it fires no more after `after`: a cron whose year field has ended, which EventBridge
   * Scheduler keeps as a schedule with no next invocation. Rates never end.
   */
  next(after: Date): Date | null;
}

/** An expression or time zone EventBridge Scheduler would refuse. */
export class ScheduleExpressionError extends Error {}

const RATE_UNITS: Readonly<Record<string, number>> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000, day: 86_400_000, days: 86_400_000 };
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
/** Cron's search horizon over every year: an expression that fires at all does within this many (Feb 29 on a Monday needs 28). */
const HORIZON_YEARS = 30;
/** DST shifts in use (Lord Howe's 30 minutes, everyone else's hour): a wall time repeated this far apart fires once. */
const DST_SHIFTS_MS = [3_600_000, 1_800_000];

/** Whether `timezone` is an IANA zone name this runtime knows (AWS takes the same database's names). */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone.length > 0;
  } catch {
    return false;
  }
}

export function parseScheduleExpression(expression: string, timezone = 'UTC'): Timetable {
  if (!isTimeZone(timezone)) throw new ScheduleExpressionError(`Time zone "${timezone}" is not an IANA time zone (for example Europe/Paris).`);
  const rate = /^rate\((\d+)\s+([a-z]+)\)$/.exec(expression.trim());
  if (rate) return rateTimetable(expression, timezone, Number(rate[1]), rate[2]!);
  const cron = /^cron\((.+)\)$/.exec(expression.trim());
  if (cron) return cronTimetable(expression, timezone, cron[1]!.trim().split(/\s+/));
  throw new ScheduleExpressionError(`Schedule "${expression}": use rate(N minutes|hours|days) or cron(minutes hours day-of-month month day-of-week year).`);
}

function rateTimetable(expression: string, timezone: string, count: number, unit: string): Timetable {
  const unitMs = RATE_UNITS[unit];
  if (unitMs === undefined) throw new ScheduleExpressionError(`Schedule "${expression}": the unit must be minute(s), hour(s) or day(s).`);
  if (count < 1) throw new ScheduleExpressionError(`Schedule "${expression}": the rate must be at least 1.`);
  // EventBridge insists on the grammar: rate(1 hour), rate(2 hours).
  if ((count === 1) === unit.endsWith('s'))
    throw new ScheduleExpressionError(`Schedule "${expression}": write ${count === 1 ? 'the singular (1 hour)' : 'the plural (2 hours)'}.`);
  const periodMs = count * unitMs;
  // Fires on multiples of the period since the epoch: stable across restarts, like a cron. The
  // cloud adapter gives Scheduler the next multiple as the start date, so both fire alike.
  return { expression, timezone, next: (after) => new Date((Math.floor(after.getTime() / periodMs) + 1) * periodMs) };
}

function cronTimetable(expression: string, timezone: string, parts: string[]): Timetable {
  if (parts.length !== 6)
    throw new ScheduleExpressionError(
      `Schedule "${expression}": cron takes six fields (minutes hours day-of-month month day-of-week year), not ${parts.length}.`,
    );
  const [min, hour, dom, month, dow, year] = parts as [string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?')) throw new ScheduleExpressionError(`Schedule "${expression}": exactly one of day-of-month and day-of-week must be "?".`);
  const check = checker(expression);
  const pattern = [
    '0',
    check.plain('minutes', min, 0, 59),
    check.plain('hours', hour, 0, 23),
    dom === '?' ? '*' : check.dayOfMonth(dom),
    check.plain('month', month, 1, 12, MONTHS),
    dow === '?' ? '*' : check.dayOfWeek(dow),
    check.plain('year', year, 1970, 2199),
  ].join(' ');
  // AND of the day fields (one of them is `*`) and Quartz day numbers (1 = SUN), as AWS reads them.
  const cron = new Cron(pattern, { timezone, domAndDow: true, alternativeWeekdays: true });
  const wall = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const minutes = new Set(expandField(min, 0, 59));
  const hours = new Set(expandField(hour, 0, 23));
  const years = expandField(year, 1970, 2199);
  const anyYear = year === '*';
  // Two days past the last year's end (UTC) is past it in every zone: no run can come after that.
  const pastLastYear = Date.UTC(Math.max(...years) + 1, 0, 3);
  const next = (after: Date): Date | null => {
    // Checked first, so a job whose years have ended costs no calendar search each time it is listed.
    if (after.getTime() >= pastLastYear) return null;
    const limit = anyYear ? after.getTime() + HORIZON_YEARS * 366 * 86_400_000 : pastLastYear;
    let t = after;
    for (;;) {
      const candidate = cron.nextRun(t);
      if (candidate === null || candidate.getTime() > limit) return null;
      t = candidate;
      const parts = wallParts(wall, candidate);
      // A time croner moved past a spring-forward gap is not one the expression names: AWS skips it.
      if (!minutes.has(parts.minute) || !hours.has(parts.hour)) continue;
      // The second pass through a fall-back hour repeats a wall time that already fired.
      if (DST_SHIFTS_MS.some((shift) => wall.format(new Date(candidate.getTime() - shift)) === wall.format(candidate))) continue;
      return candidate;
    }
  };
  // Whether it fires at all is a property of the expression, not of today: searched from before its
  // first year, so an expression refused here is refused at any date, and one whose years have
  // passed is valid (it has ended; its timetable's next() says so).
  if (next(new Date(Date.UTC(Math.min(...years), 0, 1) - 2 * 86_400_000)) === null)
    throw new ScheduleExpressionError(`Schedule "${expression}" never fires: no date matches all of its fields.`);
  return { expression, timezone, next };
}

function wallParts(format: Intl.DateTimeFormat, at: Date): { hour: number; minute: number } {
  const parts = format.formatToParts(at);
  const value = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { hour: value('hour'), minute: value('minute') };
}

/** The values of a checked minutes or hours field, to tell croner's DST shifts from real matches. */
function expandField(text: string, low: number, high: number): number[] {
  const values: number[] = [];
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    const [from, to] =
      range === '*' ? [low, high] : range.includes('-') ? range.split('-').map(Number) : [Number(range), stepText === undefined ? Number(range) : high];
    for (let v = from!; v <= to!; v += step) values.push(v);
  }
  return values;
}

/** Field checks that throw naming the field, each returning the field in croner's syntax (names as numbers). */
function checker(expression: string) {
  const bad = (name: string, text: string, why: string) => new ScheduleExpressionError(`Schedule "${expression}": ${name} "${text}" ${why}.`);
  const number = (name: string, text: string, token: string, low: number, high: number, names: readonly string[]): number => {
    const named = names.indexOf(token.toUpperCase());
    const value = named >= 0 ? named + 1 : /^\d+$/.test(token) ? Number(token) : Number.NaN;
    if (!Number.isInteger(value) || value < low || value > high) throw bad(name, text, `is not a value from ${low} to ${high}`);
    return value;
  };
  /** `*`, `n`, `a-b`, each with an optional `/step` when `steps`; lists of those. */
  const item = (name: string, text: string, part: string, low: number, high: number, names: readonly string[], steps: boolean): string => {
    const [range, stepText, extra] = part.split('/') as [string, string | undefined, string | undefined];
    if (extra !== undefined || (stepText !== undefined && !steps)) throw bad(name, text, steps ? 'has more than one step' : 'takes no step (/)');
    if (stepText !== undefined && (!/^\d+$/.test(stepText) || Number(stepText) < 1)) throw bad(name, text, 'has a step that is not a positive whole number');
    let out: string;
    if (range === '*') out = '*';
    else if (range.includes('-')) {
      const ends = range.split('-');
      if (ends.length !== 2) throw bad(name, text, 'has a malformed range');
      const [from, to] = ends.map((end) => number(name, text, end, low, high, names)) as [number, number];
      if (from > to) throw bad(name, text, 'has a range that runs backwards');
      out = `${from}-${to}`;
    } else {
      const value = number(name, text, range, low, high, names);
      // AWS reads `n/step` as from n to the end of the range; croner wants that range spelled out.
      out = stepText === undefined ? String(value) : `${value}-${high}`;
    }
    return stepText === undefined ? out : `${out}/${stepText}`;
  };
  const list = (name: string, text: string, each: (part: string) => string) => {
    if (text.split(',').some((p) => p === '')) throw bad(name, text, 'has an empty list item');
    return text.split(',').map(each).join(',');
  };
  return {
    plain: (name: string, text: string, low: number, high: number, names: readonly string[] = []) =>
      list(name, text, (part) => item(name, text, part, low, high, names, true)),
    dayOfMonth: (text: string) =>
      list('day-of-month', text, (part) => {
        const upper = part.toUpperCase();
        if (upper === 'L' || upper === 'LW') {
          if (text.includes(',')) throw bad('day-of-month', text, `cannot list ${upper} with other days`);
          return upper;
        }
        const weekday = /^(\d+)W$/.exec(upper);
        if (weekday) {
          if (text.includes(',')) throw bad('day-of-month', text, 'cannot list W with other days');
          return `${number('day-of-month', text, weekday[1]!, 1, 31, [])}W`;
        }
        return item('day-of-month', text, part, 1, 31, [], true);
      }),
    dayOfWeek: (text: string) =>
      list('day-of-week', text, (part) => {
        const upper = part.toUpperCase();
        // `L` alone is the last day of the week, Saturday.
        if (upper === 'L') return '7';
        const last = /^([A-Z]+|\d+)L$/.exec(upper);
        if (last) {
          if (text.includes(',')) throw bad('day-of-week', text, 'cannot list L with other days');
          return `${number('day-of-week', text, last[1]!, 1, 7, DAYS)}#L`;
        }
        const nth = /^([A-Z]+|\d+)#(\d+)$/.exec(upper);
        if (nth) {
          if (text.includes(',')) throw bad('day-of-week', text, 'cannot list # with other days');
          const n = Number(nth[2]);
          if (n < 1 || n > 5) throw bad('day-of-week', text, 'names an occurrence that is not 1 to 5');
          return `${number('day-of-week', text, nth[1]!, 1, 7, DAYS)}#${n}`;
        }
        return item('day-of-week', text, part, 1, 7, DAYS, false);
      }),
  };
}
