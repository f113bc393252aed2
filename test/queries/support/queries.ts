import { expect } from 'vitest';
import type { Envelope } from '../../support/results.js';
import { KEYS, type TestService } from '../../support/service.js';

/** Calls of the query API for tests, each with the key of the account that makes it. */

export type Key = (typeof KEYS)[keyof typeof KEYS];

export function post(body: unknown, key: string = KEYS.alice): RequestInit & { key: string } {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    key,
  };
}

/** Creates a query and returns its id; fails the test on anything but 200. */
export async function createQuery(
  service: TestService,
  body: Record<string, unknown>,
  key: string = KEYS.alice,
): Promise<number> {
  const { status, body: answer } = await service.json<{ query_id: number }>('/v1/query', post(body, key));
  expect(status, JSON.stringify(answer)).toBe(200);
  return answer.query_id;
}

/** Submits a run of a saved query; returns the execution id. */
export async function execute(
  service: TestService,
  queryId: number,
  body: Record<string, unknown> = {},
  key: string = KEYS.alice,
): Promise<string> {
  const { status, body: answer } = await service.json<{ execution_id: string; state: string }>(
    `/v1/query/${queryId}/execute`,
    post(body, key),
  );
  expect(status, JSON.stringify(answer)).toBe(200);
  expect(answer.state).toBe('QUERY_STATE_PENDING');
  return answer.execution_id;
}

/** Submits ad-hoc SQL; returns the execution id. */
export async function executeSql(
  service: TestService,
  sql: string,
  key: string = KEYS.alice,
): Promise<string> {
  const { status, body } = await service.json<{ execution_id: string; state: string }>(
    '/v1/sql/execute',
    post({ sql, performance: 'medium' }, key),
  );
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.state).toBe('QUERY_STATE_PENDING');
  return body.execution_id;
}

/** The execution's status once it has finished. */
export async function finished(
  service: TestService,
  executionId: string,
  key: string = KEYS.alice,
  timeoutMs = 60_000,
): Promise<Envelope> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await service.json<Envelope>(`/v1/execution/${executionId}/status`, { key });
    expect(status, JSON.stringify(body)).toBe(200);
    if (body.is_execution_finished) return body;
    if (Date.now() > until)
      throw new Error(`execution ${executionId} did not finish: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the execution is running (its SQL has started). */
export async function executing(service: TestService, executionId: string, key: string = KEYS.alice) {
  for (let i = 0; i < 1500; i++) {
    const { body } = await service.json<Envelope>(`/v1/execution/${executionId}/status`, { key });
    if (body.state === 'QUERY_STATE_EXECUTING') return;
    if (body.is_execution_finished)
      throw new Error(`execution ${executionId} finished: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`execution ${executionId} never started`);
}

/** Runs ad-hoc SQL to the end and returns its rows (first page of all rows). */
export async function rowsOf(
  service: TestService,
  executionId: string,
  key: string = KEYS.alice,
): Promise<Record<string, unknown>[]> {
  const status = await finished(service, executionId, key);
  expect(status.state, JSON.stringify(status)).toBe('QUERY_STATE_COMPLETED');
  const { body } = await service.json<Envelope>(`/v1/execution/${executionId}/results`, { key });
  return body.result?.rows ?? [];
}

/** Uploads a CSV as `key`'s table `dataset_<name>`. */
export async function uploadTable(
  service: TestService,
  name: string,
  data: string,
  options: { key?: string; isPrivate?: boolean } = {},
): Promise<void> {
  const { status, body } = await service.json(
    '/v1/table/upload/csv',
    post({ table_name: name, data, is_private: options.isPrivate ?? false }, options.key ?? KEYS.alice),
  );
  expect(status, JSON.stringify(body)).toBe(200);
}

/** A query that keeps DuckDB busy for minutes unless interrupted. */
export const RUNAWAY_SQL = 'SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b';
