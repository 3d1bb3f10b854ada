/**
 * EventBridge Scheduler's recurring expressions, so one manifest entry means the same timetable in
 * the cloud and locally: `rate(N minute|minutes|hour|hours|day|days)` and
 * `cron(minutes hours day-of-month month day-of-week year)`, in UTC. Cron fields take `*`, numbers,
 * ranges `a-b`, lists `a,b`, steps `*\/n` and `a-b/n`, month names JAN-DEC and day names SUN-SAT
 * (1 = SUNDAY, as in EventBridge); one of day-of-month and day-of-week must be `?`. The `L`, `W`
 * and `#` forms are refused rather than half-supported.
 */

/** A timetable: the first fire time strictly after a moment. */
export interface Timetable {
  readonly expression: string;
  next(after: Date): Date;
}

/** An expression EventBridge Scheduler would refuse or that this parser does not support. */
export class ScheduleExpressionError extends Error {}

const RATE_UNITS: Readonly<Record<string, number>> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000, day: 86_400_000, days: 86_400_000 };
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
/** Cron's search horizon: a valid expression fires within this many years (Feb 29 on a Monday needs 28). */
const HORIZON_YEARS = 30;

export function parseScheduleExpression(expression: string): Timetable {
  const rate = /^rate\((\d+)\s+([a-z]+)\)$/.exec(expression.trim());
  if (rate) return rateTimetable(expression, Number(rate[1]), rate[2]!);
  const cron = /^cron\((.+)\)$/.exec(expression.trim());
  if (cron) return cronTimetable(expression, cron[1]!.trim().split(/\s+/));
  throw new ScheduleExpressionError(`Schedule "${expression}": use rate(N minutes|hours|days) or cron(minutes hours day-of-month month day-of-week year).`);
}

function rateTimetable(expression: string, count: number, unit: string): Timetable {
  const unitMs = RATE_UNITS[unit];
  if (unitMs === undefined) throw new ScheduleExpressionError(`Schedule "${expression}": the unit must be minute(s), hour(s) or day(s).`);
  if (count < 1) throw new ScheduleExpressionError(`Schedule "${expression}": the rate must be at least 1.`);
  // EventBridge insists on the grammar: rate(1 hour), rate(2 hours).
  if ((count === 1) === unit.endsWith('s'))
    throw new ScheduleExpressionError(`Schedule "${expression}": write ${count === 1 ? 'the singular (1 hour)' : 'the plural (2 hours)'}.`);
  const periodMs = count * unitMs;
  // Fires on multiples of the period since the epoch: stable across restarts, like a cron.
  return { expression, next: (after) => new Date((Math.floor(after.getTime() / periodMs) + 1) * periodMs) };
}

interface CronFields {
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number> | null;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number> | null;
  readonly years: ReadonlySet<number> | null;
}

function cronTimetable(expression: string, parts: string[]): Timetable {
  if (parts.length !== 6)
    throw new ScheduleExpressionError(
      `Schedule "${expression}": cron takes six fields (minutes hours day-of-month month day-of-week year), not ${parts.length}.`,
    );
  const [min, hour, dom, month, dow, year] = parts as [string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?')) throw new ScheduleExpressionError(`Schedule "${expression}": exactly one of day-of-month and day-of-week must be "?".`);
  const fields: CronFields = {
    minutes: field(expression, 'minutes', min, 0, 59),
    hours: field(expression, 'hours', hour, 0, 23),
    daysOfMonth: dom === '?' ? null : field(expression, 'day-of-month', dom, 1, 31),
    months: field(expression, 'month', month, 1, 12, MONTHS),
    // EventBridge numbers days 1 (SUN) to 7 (SAT); stored as JavaScript's 0 to 6.
    daysOfWeek: dow === '?' ? null : new Set([...field(expression, 'day-of-week', dow, 1, 7, DAYS)].map((d) => d - 1)),
    years: year === '*' ? null : field(expression, 'year', year, 1970, 2199),
  };
  const timetable: Timetable = { expression, next: (after) => nextCron(fields, after, expression) };
  timetable.next(new Date(0));
  return timetable;
}

/** The values a field allows; `names` map to 1-based numbers (JAN = 1, SUN = 1). */
function field(expression: string, name: string, text: string, low: number, high: number, names: readonly string[] = []): Set<number> {
  const values = new Set<number>();
  const bad = (why: string) => new ScheduleExpressionError(`Schedule "${expression}": ${name} "${text}" ${why}.`);
  const number = (token: string): number => {
    const named = names.indexOf(token.toUpperCase());
    const value = named >= 0 ? named + 1 : /^\d+$/.test(token) ? Number(token) : Number.NaN;
    if (!Number.isInteger(value) || value < low || value > high) throw bad(`is not a value from ${low} to ${high}`);
    return value;
  };
  for (const part of text.split(',')) {
    if (part.includes('#') || /^(\d*L|\d+W|LW)$/.test(part)) throw bad('uses L, W or #, which are not supported');
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw bad('has a step that is not a positive whole number');
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [low, high];
    else if (range.includes('-')) [from, to] = range.split('-').map(number) as [number, number];
    else [from, to] = [number(range), stepText === undefined ? number(range) : high];
    if (from > to) throw bad('has a range that runs backwards');
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

function nextCron(f: CronFields, after: Date, expression: string): Date {
  // Minute resolution: start at the next whole minute and skip whole days and hours that cannot match.
  const t = new Date(Math.floor(after.getTime() / 60_000) * 60_000 + 60_000);
  const limit = after.getUTCFullYear() + HORIZON_YEARS;
  while (t.getUTCFullYear() <= limit) {
    const dayMatches =
      (f.years === null || f.years.has(t.getUTCFullYear())) &&
      f.months.has(t.getUTCMonth() + 1) &&
      (f.daysOfMonth === null || f.daysOfMonth.has(t.getUTCDate())) &&
      (f.daysOfWeek === null || f.daysOfWeek.has(t.getUTCDay()));
    if (!dayMatches) {
      t.setUTCHours(24, 0, 0, 0);
      continue;
    }
    if (!f.hours.has(t.getUTCHours())) {
      t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (f.minutes.has(t.getUTCMinutes())) return t;
    t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
  }
  throw new ScheduleExpressionError(`Schedule "${expression}" never fires within ${HORIZON_YEARS} years.`);
}
