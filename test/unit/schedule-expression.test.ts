/** EventBridge Scheduler's expressions, as the local scheduler reads them: the same timetable in both wirings. */
import { describe, expect, it } from 'vitest';
import { parseScheduleExpression, ScheduleExpressionError } from '../../functions/core/entry/schedule-expression.ts';

const at = (iso: string) => new Date(iso);
/** Up to `count` fire times after `from`, fewer when the timetable ends first. */
const fires = (expression: string, from: string, count: number, timezone?: string) => {
  const timetable = parseScheduleExpression(expression, timezone);
  const times: string[] = [];
  let t: Date | null = at(from);
  while (times.length < count && (t = timetable.next(t)) !== null) times.push(t.toISOString());
  return times;
};

describe('schedule expressions', () => {
  it('fires a rate on whole multiples of its period, so restarts keep the slots', () => {
    // Act / Assess
    expect(fires('rate(5 minutes)', '2026-11-24T10:02:30Z', 3)).toEqual(['2026-11-24T10:05:00.000Z', '2026-11-24T10:10:00.000Z', '2026-11-24T10:15:00.000Z']);
    expect(fires('rate(1 day)', '2026-11-24T10:02:30Z', 1)).toEqual(['2026-11-25T00:00:00.000Z']);
  });

  it('fires a cron at its minutes, hours, days and months in UTC, with EventBridge day numbers', () => {
    // Act / Assess: 03:30 on weekdays (2 = MON ... 6 = FRI); the 24th of November 2026 is a Tuesday
    expect(fires('cron(30 3 ? * 2-6 *)', '2026-11-27T04:00:00Z', 2)).toEqual(['2026-11-30T03:30:00.000Z', '2026-12-01T03:30:00.000Z']);
    expect(fires('cron(0/15 * * * ? *)', '2026-11-24T10:07:00Z', 2)).toEqual(['2026-11-24T10:15:00.000Z', '2026-11-24T10:30:00.000Z']);
    expect(fires('cron(0 12 1 JAN,JUL ? *)', '2026-11-24T00:00:00Z', 2)).toEqual(['2027-01-01T12:00:00.000Z', '2027-07-01T12:00:00.000Z']);
    expect(fires('cron(0 0 29 2 ? *)', '2026-11-24T00:00:00Z', 1)).toEqual(['2028-02-29T00:00:00.000Z']);
    expect(fires('cron(0 9 ? * MON *)', '2026-11-24T00:00:00Z', 1)).toEqual(['2026-11-30T09:00:00.000Z']);
  });

  // The examples of AWS's cron reference (EventBridge, "Cron expressions"), with their documented meaning.
  it.each([
    ['cron(0 10 * * ? *)', '2026-11-24T10:00:00Z', ['2026-11-25T10:00:00.000Z', '2026-11-26T10:00:00.000Z']],
    ['cron(15 12 * * ? *)', '2026-11-24T13:00:00Z', ['2026-11-25T12:15:00.000Z']],
    ['cron(0 18 ? * MON-FRI *)', '2026-11-27T18:00:00Z', ['2026-11-30T18:00:00.000Z']],
    ['cron(0 8 1 * ? *)', '2026-11-24T00:00:00Z', ['2026-12-01T08:00:00.000Z', '2027-01-01T08:00:00.000Z']],
    ['cron(0/10 * ? * MON-FRI *)', '2026-11-27T23:55:00Z', ['2026-11-30T00:00:00.000Z', '2026-11-30T00:10:00.000Z']],
    ['cron(0/5 8-17 ? * MON-FRI *)', '2026-11-24T17:55:00Z', ['2026-11-25T08:00:00.000Z']],
    ['cron(0 9 ? * 2#1 *)', '2026-11-24T00:00:00Z', ['2026-12-07T09:00:00.000Z', '2027-01-04T09:00:00.000Z']],
    // L, W and # as the reference defines them: the last day, the weekday nearest a date, the nth weekday.
    ['cron(0 0 L * ? *)', '2026-11-24T00:00:00Z', ['2026-11-30T00:00:00.000Z', '2026-12-31T00:00:00.000Z', '2027-01-31T00:00:00.000Z']],
    ['cron(0 0 LW * ? *)', '2027-01-01T00:00:00Z', ['2027-01-29T00:00:00.000Z']],
    ['cron(0 0 3W * ? *)', '2026-12-04T00:00:00Z', ['2027-01-04T00:00:00.000Z']],
    ['cron(0 0 ? * 6L *)', '2026-11-01T00:00:00Z', ['2026-11-27T00:00:00.000Z', '2026-12-25T00:00:00.000Z']],
    ['cron(0 0 ? * L *)', '2026-11-24T00:00:00Z', ['2026-11-28T00:00:00.000Z']],
    ['cron(0 0 ? * FRI#3 *)', '2026-11-01T00:00:00Z', ['2026-11-20T00:00:00.000Z']],
    ['cron(30 14 10,20 * ? 2026-2027)', '2027-12-20T15:00:00Z', []],
    ['cron(0 0 1 1 ? 2027)', '2026-11-24T00:00:00Z', ['2027-01-01T00:00:00.000Z']],
  ])('%s fires as AWS documents it', (expression, from, expected) => {
    // Act: at least one, so an expected end is seen
    const times = fires(expression, from, Math.max(expected.length, 1));

    // Assess
    expect(times).toEqual(expected);
  });

  it('ends a cron after the last run of its year range: no next run, and no error', () => {
    // Prepare
    const timetable = parseScheduleExpression('cron(0 12 31 12 ? 2026)');

    // Act
    const last = timetable.next(at('2026-12-30T00:00:00Z'));
    const afterLast = timetable.next(at('2026-12-31T12:00:00Z'));
    const yearsLater = timetable.next(at('2031-06-01T00:00:00Z'));

    // Assess
    expect(last?.toISOString()).toBe('2026-12-31T12:00:00.000Z');
    expect(afterLast).toBeNull();
    expect(yearsLater).toBeNull();
  });

  it("reads the end of a year range in the schedule's zone, not in UTC", () => {
    // Act / Assess: midnight of 1 January 2027 in Kiritimati (UTC+14) is still 2026 in UTC, and it is in 2027 there
    expect(fires('cron(0 0 1 1 ? 2027)', '2026-12-31T00:00:00Z', 2, 'Pacific/Kiritimati')).toEqual(['2026-12-31T10:00:00.000Z']);
    // 23:00 on 31 December 2026 in Honolulu (UTC-10) is already 2027 in UTC, and it is 2026 there
    expect(fires('cron(0 23 31 12 ? 2026)', '2026-12-31T00:00:00Z', 2, 'Pacific/Honolulu')).toEqual(['2027-01-01T09:00:00.000Z']);
  });

  it('accepts an expression whose years have passed, whatever the date: it is valid and has ended', () => {
    // Act
    const timetable = parseScheduleExpression('cron(0 8 1 1 ? 2020)');

    // Assess: it fired once, in 2020, and fires no more
    expect(timetable.next(at('2019-06-01T00:00:00Z'))?.toISOString()).toBe('2020-01-01T08:00:00.000Z');
    expect(timetable.next(at('2020-01-01T08:00:00Z'))).toBeNull();
    expect(timetable.next(new Date())).toBeNull();
  });

  it('reads cron fields in the named time zone across daylight saving time, as EventBridge Scheduler does', () => {
    // Act / Assess: 08:00 in Paris is 07:00 UTC in winter and 06:00 UTC in summer (clocks go forward on 29 March 2026).
    expect(fires('cron(0 8 * * ? *)', '2026-03-27T12:00:00Z', 3, 'Europe/Paris')).toEqual([
      '2026-03-28T07:00:00.000Z',
      '2026-03-29T06:00:00.000Z',
      '2026-03-30T06:00:00.000Z',
    ]);
    // 02:30 does not exist in New York on 8 March 2026 (02:00 -> 03:00): that run is skipped.
    expect(fires('cron(30 2 * * ? *)', '2026-03-07T00:00:00Z', 2, 'America/New_York')).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
    // 01:30 happens twice on 1 November 2026 (02:00 -> 01:00): it fires once.
    expect(fires('cron(30 1 * * ? *)', '2026-10-31T12:00:00Z', 2, 'America/New_York')).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
    // Rates ignore the zone.
    expect(fires('rate(1 hour)', '2026-03-08T06:10:00Z', 2, 'America/New_York')).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-08T08:00:00.000Z']);
  });

  it('refuses a time zone that is not an IANA name', () => {
    // Act / Assess
    expect(() => parseScheduleExpression('cron(0 8 * * ? *)', 'Mars/Olympus')).toThrow(/Time zone "Mars\/Olympus" is not an IANA time zone/);
  });

  it.each([
    ['every 5 minutes', /use rate/],
    ['rate(0 minutes)', /at least 1/],
    ['rate(5 minute)', /plural/],
    ['rate(1 hours)', /singular/],
    ['rate(5 weeks)', /unit/],
    ['cron(0 12 * * *)', /six fields/],
    ['cron(0 12 * * MON *)', /exactly one of day-of-month and day-of-week/],
    ['cron(60 12 * * ? *)', /minutes "60"/],
    ['cron(0 12 ? * 2/2 *)', /day-of-week "2\/2" takes no step/],
    ['cron(0 12 ? * 2#6 *)', /occurrence that is not 1 to 5/],
    ['cron(0 12 L,3 * ? *)', /cannot list L/],
    ['cron(0 12 32W * ? *)', /day-of-month "32W"/],
    ['cron(0 12 ? * 8L *)', /day-of-week "8L"/],
    ['cron(0 12 * 13 ? *)', /month "13"/],
    ['cron(0 12 * * ? 1969)', /year "1969"/],
    ['cron(0 25 * * ? *)', /hours "25"/],
    ['cron(0 12 1W * 2 *)', /exactly one of/],
    ['cron(0 12 31 2 ? *)', /never fires/],
    // 2027 is not a leap year: no date matches, in any year the field allows
    ['cron(0 12 29 2 ? 2027)', /never fires/],
    ['cron(0 12 ? * 5-2 *)', /backwards/],
  ])('refuses %s with a message that names the problem', (expression, message) => {
    // Act
    const refused = (() => {
      try {
        parseScheduleExpression(expression);
        return null;
      } catch (error) {
        return error;
      }
    })();

    // Assess
    expect(refused).toBeInstanceOf(ScheduleExpressionError);
    expect((refused as Error).message).toMatch(message);
  });
});
