import { badRequest } from '../errors.js';
import { type CronSchedule, parseCronSchedule } from './cron-schedule.js';
import { validateViewName } from './view-name.js';
import type { Performance } from './view-store.js';

/** The bodies of the materialized views' endpoints, checked once at the edge. */

export interface UpsertViewRequest {
  name: string;
  queryId: number;
  /** undefined: no schedule. */
  schedule?: CronSchedule;
  isPrivate: boolean;
  performance: Performance;
  expiresAt?: Date;
}

type Body = Record<string, unknown>;

function object(raw: unknown, shape: string): Body {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw badRequest(`the body must be a JSON object: ${shape}`);
  return raw as Body;
}

function onlyFields(body: Body, allowed: readonly string[]): void {
  for (const field of Object.keys(body))
    if (!allowed.includes(field))
      throw badRequest(
        `unknown field ${JSON.stringify(field.slice(0, 64))}; this operation takes ${allowed.join(', ')}`,
      );
}

export function readPerformance(body: Body): Performance {
  const value = body.performance ?? 'medium';
  if (value !== 'medium' && value !== 'large')
    throw badRequest('field "performance" must be "medium" or "large"');
  return value;
}

const UPSERT_SHAPE = '{name, query_id, cron_expression, is_private, performance, expires_at}';

export function readUpsertView(raw: unknown, now: Date): UpsertViewRequest {
  const body = object(raw ?? {}, UPSERT_SHAPE);
  onlyFields(body, ['name', 'query_id', 'cron_expression', 'is_private', 'performance', 'expires_at']);
  if (body.name === undefined) throw badRequest('field "name" is required');
  if (body.query_id === undefined) throw badRequest('field "query_id" is required');
  const queryId = body.query_id;
  if (typeof queryId !== 'number' || !Number.isSafeInteger(queryId) || queryId < 1)
    throw badRequest('field "query_id" must be a positive whole number');
  const isPrivate = body.is_private ?? false;
  if (typeof isPrivate !== 'boolean') throw badRequest('field "is_private" must be true or false');
  const cron = body.cron_expression;
  const request: UpsertViewRequest = {
    name: validateViewName(body.name),
    queryId,
    isPrivate,
    performance: readPerformance(body),
  };
  if (cron !== undefined && cron !== null && cron !== '') request.schedule = parseCronSchedule(cron);
  if (body.expires_at !== undefined && body.expires_at !== null) {
    const text = body.expires_at;
    const at = typeof text === 'string' ? new Date(text) : new Date(Number.NaN);
    if (Number.isNaN(at.getTime()))
      throw badRequest('field "expires_at" must be a timestamp, e.g. 2027-01-31T00:00:00Z');
    if (at.getTime() <= now.getTime()) throw badRequest('field "expires_at" must be in the future');
    request.expiresAt = at;
  }
  return request;
}

/** `{performance}` of a refresh, optional like the body itself. */
export function readRefreshView(raw: unknown): Performance {
  if (raw === undefined) return 'medium';
  const body = object(raw, '{performance}');
  onlyFields(body, ['performance']);
  return readPerformance(body);
}
