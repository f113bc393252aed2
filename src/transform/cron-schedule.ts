import { CronExpressionParser } from 'cron-parser';
import { badRequest } from '../errors.js';

/**
 * A materialized view's `cron_expression` (Dune's rule): five fields (minute, hour, day of
 * month, month, day of week), read in UTC, firing at most every 15 minutes and at least once a
 * week. cron-parser reads the fields and finds the next run; the two bounds are decided here,
 * exactly, from its parsed fields instead of by walking every run: the times of day are the
 * minute × hour fields, the days those a day-level expression (`0 0 DOM MONTH DOW`) includes, so a
 * check costs one `includesDate` per day of a year (373 calls, about 15 ms measured on this
 * machine) where walking the runs of `*\/15 * * * *` for a year is 35,000 `next()` calls at
 * 74 µs each (2.6 s).
 */

export const MIN_INTERVAL_MS = 15 * 60_000;
export const MAX_INTERVAL_MS = 7 * 86_400_000;
const DAY_MS = 86_400_000;
/** A year and a week: every gap between firing days of a yearly pattern shows within it. */
const DAYS_CHECKED = 373;
const MAX_EXPRESSION_LENGTH = 200;

export interface CronSchedule {
  expression: string;
  /** The first run strictly after `after`. */
  nextAfter(after: Date): Date;
}

export function parseCronSchedule(value: unknown, field = 'cron_expression'): CronSchedule {
  if (typeof value !== 'string') throw badRequest(`field "${field}" must be a string`);
  const shown = JSON.stringify(value.slice(0, MAX_EXPRESSION_LENGTH));
  const refuse = (why: string) =>
    badRequest(`field "${field}": ${shown} is not a schedule this service takes: ${why}`);
  if (value.length > MAX_EXPRESSION_LENGTH) throw refuse(`longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const fields = value.trim().split(/\s+/);
  if (fields.length !== 5)
    throw refuse(
      `a cron expression has five fields (minute hour day-of-month month day-of-week), this one has ${fields[0] === '' ? 0 : fields.length}`,
    );
  const [, , dayOfMonth, month, dayOfWeek] = fields as [string, string, string, string, string];
  const expression = fields.join(' ');
  let times: number[];
  let days: ReturnType<typeof CronExpressionParser.parse>;
  try {
    const parsed = CronExpressionParser.parse(expression, { tz: 'UTC' });
    times = timesOfDay(parsed.fields.hour.values as number[], parsed.fields.minute.values as number[]);
    days = CronExpressionParser.parse(`0 0 ${dayOfMonth} ${month} ${dayOfWeek}`, { tz: 'UTC' });
  } catch (error) {
    throw refuse((error as Error).message);
  }
  const { min, max } = gaps(times, firingDays(days));
  if (min < MIN_INTERVAL_MS)
    throw refuse(`it runs ${describe(min)} apart at times; the shortest interval allowed is 15 minutes`);
  if (max > MAX_INTERVAL_MS)
    throw refuse(`it goes ${describe(max)} without a run; it must run at least once a week`);
  return {
    expression,
    nextAfter: (after) => nextRunAfter(expression, after),
  };
}

/** The first run of a stored (already checked) expression strictly after `after`. */
export function nextRunAfter(expression: string, after: Date): Date {
  return CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: after }).next().toDate();
}

/** Minutes after midnight at which it runs, in order. */
function timesOfDay(hours: readonly number[], minutes: readonly number[]): number[] {
  const times: number[] = [];
  for (const h of hours) for (const m of minutes) times.push(h * 60 + m);
  return times.sort((a, b) => a - b);
}

/** Indexes (days after the first checked) of the days on which it runs. */
function firingDays(days: ReturnType<typeof CronExpressionParser.parse>): number[] {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const firing: number[] = [];
  for (let d = 0; d < DAYS_CHECKED; d++) if (days.includesDate(new Date(today + d * DAY_MS))) firing.push(d);
  return firing;
}

/**
 * The shortest and longest time between two runs. Within a day, consecutive times; between
 * firing days d and e, (e - d) days less the last time plus the first; before the first firing
 * day and after the last one of the checked span, at least the days without a run.
 */
function gaps(times: readonly number[], days: readonly number[]): { min: number; max: number } {
  const first = (times[0] as number) * 60_000;
  const last = (times[times.length - 1] as number) * 60_000;
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (let i = 1; i < times.length; i++) {
    const gap = ((times[i] as number) - (times[i - 1] as number)) * 60_000;
    min = Math.min(min, gap);
    max = Math.max(max, gap);
  }
  if (days.length === 0) return { min, max: Number.POSITIVE_INFINITY };
  for (let i = 1; i < days.length; i++) {
    const gap = ((days[i] as number) - (days[i - 1] as number)) * DAY_MS - last + first;
    min = Math.min(min, gap);
    max = Math.max(max, gap);
  }
  max = Math.max(
    max,
    (days[0] as number) * DAY_MS,
    (DAYS_CHECKED - 1 - (days[days.length - 1] as number)) * DAY_MS,
  );
  return { min, max };
}

function describe(ms: number): string {
  if (!Number.isFinite(ms)) return 'more than a year';
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} minutes`;
  if (ms < DAY_MS) return `${Math.round((ms / 3_600_000) * 10) / 10} hours`;
  return `${Math.round((ms / DAY_MS) * 10) / 10} days`;
}
