import type { Account } from '../auth/account.js';
import { badRequest } from '../errors.js';
import type { Executions } from '../executions/executions.js';
import type { Queries } from '../queries/queries.js';
import type { Database } from '../storage/database.js';
import { SERVICE_SCHEMA } from '../storage/service-schema.js';
import { namespaceStorageBytes } from '../tables/table-storage.js';

/**
 * A key's usage as Dune's `POST /v1/usage` answers it, from what the key really keeps here:
 * `bytes_used` is its tables' bytes (uploaded, created, materialized views: `table_size_bytes`)
 * and their kept versions (DuckDB's storage of each, table-storage.ts), plus its kept results as RESULT_STORAGE_PER_KEY counts them (JSON bytes + 16 KiB each,
 * executions/key-quotas.ts); `bytes_allowed` is RESULT_STORAGE_PER_KEY, the one storage quota a
 * key has (tables have none of their own, so `bytes_used` may pass it). This service bills no
 * credits: each billing period (a calendar month, UTC) says 0 used of 0 included.
 */

export interface UsageRequest {
  /** YYYY-MM-DD, UTC. */
  startDate?: string;
  endDate?: string;
}

export interface BillingPeriod {
  start_date: string;
  end_date: string;
  credits_used: number;
  credits_included: number;
}

export interface Usage {
  private_queries: number;
  private_dashboards: number;
  bytes_used: number;
  bytes_allowed: number;
  billing_periods: BillingPeriod[];
}

/** Months one answer may list: a range is a year or two, never unbounded. */
export const MAX_BILLING_PERIODS = 24;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The body `{start_date?, end_date?}`, checked: a 400 names a bad field. */
export function readUsageRequest(body: unknown): UsageRequest {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object: {start_date, end_date}, both optional');
  const request: UsageRequest = {};
  for (const [field, value] of Object.entries(body)) {
    if (field !== 'start_date' && field !== 'end_date')
      throw badRequest(`unknown field "${field.slice(0, 64)}"; this operation takes start_date and end_date`);
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string' || !isDate(value))
      throw badRequest(`field "${field}" must be a date written YYYY-MM-DD`);
    if (field === 'start_date') request.startDate = value;
    else request.endDate = value;
  }
  if (request.startDate && request.endDate && request.startDate > request.endDate)
    throw badRequest('start_date must not be after end_date');
  return request;
}

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** The calendar months (UTC) the range touches; the current month without a range. */
export function billingPeriods(request: UsageRequest, now = new Date()): BillingPeriod[] {
  const today = now.toISOString().slice(0, 10);
  const start = request.startDate ?? request.endDate ?? today;
  const end = request.endDate ?? (request.startDate && request.startDate > today ? request.startDate : today);
  let year = Number(start.slice(0, 4));
  let month = Number(start.slice(5, 7)) - 1;
  const last = Number(end.slice(0, 4)) * 12 + Number(end.slice(5, 7)) - 1;
  if (last - (year * 12 + month) + 1 > MAX_BILLING_PERIODS)
    throw badRequest(`the range spans more than ${MAX_BILLING_PERIODS} months; ask for a shorter one`);
  const periods: BillingPeriod[] = [];
  while (year * 12 + month <= last) {
    const first = new Date(Date.UTC(year, month, 1));
    const lastDay = new Date(Date.UTC(year, month + 1, 0));
    periods.push({
      start_date: first.toISOString().slice(0, 10),
      end_date: lastDay.toISOString().slice(0, 10),
      credits_used: 0,
      credits_included: 0,
    });
    month++;
    if (month === 12) {
      month = 0;
      year++;
    }
  }
  return periods;
}

export async function keyUsage(
  deps: { database: Database; executions: Executions; queries: Queries; bytesAllowed: number },
  account: Account,
  request: UsageRequest,
): Promise<Usage> {
  const periods = billingPeriods(request);
  const { tables, versions } = await deps.database.read(async (s) => {
    const [row] = await s.all<{ bytes: bigint | null }>(
      `SELECT sum(size_bytes)::BIGINT AS bytes FROM ${SERVICE_SCHEMA}.tables WHERE namespace = ?`,
      [account.handle],
    );
    // The tables' kept versions (undo) count too (issue 24).
    return {
      tables: Number(row?.bytes ?? 0),
      versions: (await namespaceStorageBytes(s, account.handle)).versions,
    };
  });
  return {
    private_queries: await deps.queries.store.countPrivate(account.handle),
    private_dashboards: 0,
    bytes_used: tables + versions + deps.executions.resultBytesOf(account.handle),
    bytes_allowed: deps.bytesAllowed,
    billing_periods: periods,
  };
}
