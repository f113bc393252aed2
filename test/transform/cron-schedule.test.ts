import { describe, expect, it } from 'vitest';
import { parseCronSchedule } from '../../src/transform/cron-schedule.js';

/** Dune's rule for a view's schedule: five fields, at most every 15 minutes, at least weekly. */

describe('parseCronSchedule', () => {
  it.each([
    ['*/15 * * * *', '2026-01-01T00:07:00Z', '2026-01-01T00:15:00.000Z'],
    ['0,15,30,45 * * * *', '2026-01-01T00:45:00Z', '2026-01-01T01:00:00.000Z'],
    ['0 * * * *', '2026-01-01T00:07:00Z', '2026-01-01T01:00:00.000Z'],
    ['30 6 * * *', '2026-01-01T07:00:00Z', '2026-01-02T06:30:00.000Z'],
    ['0 0 * * 0', '2026-01-01T00:00:00Z', '2026-01-04T00:00:00.000Z'],
    ['0 9 * * 1-5', '2026-01-02T10:00:00Z', '2026-01-05T09:00:00.000Z'],
    ['0 0 1-7 * 1', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00.000Z'],
    ['  0   12 * * 3 ', '2026-01-01T00:00:00Z', '2026-01-07T12:00:00.000Z'],
  ])('takes %s (next after %s: %s), in UTC', (expression, after, next) => {
    expect(parseCronSchedule(expression).nextAfter(new Date(after)).toISOString()).toBe(next);
  });

  it.each([
    ['*/10 * * * *', /10 minutes apart.*15 minutes/],
    ['* * * * *', /1 minutes apart/],
    ['5,55 0,23 * * *', /10 minutes apart/],
    ['0,14 * * * *', /14 minutes apart/],
    ['0 0 1 * *', /31 days without a run/],
    ['0 0 * 2 *', /without a run/],
    ['0 0 29 2 *', /without a run/],
    ['0 0 L * *', /without a run/],
    ['*/15 * * 1 *', /without a run/],
    ['* * *', /five fields.*has 3/],
    ['0 * * * * *', /five fields.*has 6/],
    ['', /five fields.*has 0/],
    ['@hourly', /five fields/],
    ['61 * * * *', /expected range 0-59/],
    ['a b c d e', /Invalid characters/],
    ['0 0 31 2 *', /Invalid explicit day of month/],
    [`${'1,'.repeat(150)}1 * * * *`, /longer than 200/],
  ])('refuses %s with a 400 naming cron_expression', (expression, why) => {
    let error: (Error & { status?: number }) | undefined;
    try {
      parseCronSchedule(expression);
    } catch (caught) {
      error = caught as Error & { status?: number };
    }
    expect(error?.status).toBe(400);
    expect(error?.message).toMatch(/^field "cron_expression": /);
    expect(error?.message).toMatch(why);
  });

  it('refuses what is not a string', () => {
    expect(() => parseCronSchedule(15)).toThrow('field "cron_expression" must be a string');
  });
});
