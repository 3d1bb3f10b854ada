/** EventBridge Scheduler's expressions, as the local scheduler reads them: the same timetable in both wirings. */
import { describe, expect, it } from 'vitest';
import { parseScheduleExpression, ScheduleExpressionError } from '../../functions/core/entry/schedule-expression.ts';

const at = (iso: string) => new Date(iso);
const fires = (expression: string, from: string, count: number) => {
  const timetable = parseScheduleExpression(expression);
  const times: string[] = [];
  let t = at(from);
  for (let i = 0; i < count; i++) times.push((t = timetable.next(t)).toISOString());
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

  it.each([
    ['every 5 minutes', /use rate/],
    ['rate(0 minutes)', /at least 1/],
    ['rate(5 minute)', /plural/],
    ['rate(1 hours)', /singular/],
    ['rate(5 weeks)', /unit/],
    ['cron(0 12 * * *)', /six fields/],
    ['cron(0 12 * * MON *)', /exactly one of day-of-month and day-of-week/],
    ['cron(60 12 * * ? *)', /minutes "60"/],
    ['cron(0 12 L * ? *)', /not supported/],
    ['cron(0 12 31 2 ? *)', /never fires/],
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
