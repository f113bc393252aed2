import { expect } from 'vitest';
import { KEYS, type TestService, uploadBody } from '../../support/service.js';

/** Calls shared by the tests of materialized views and pipelines. */

/** A clock the test moves by hand (startService's `clock`). */
export class TestClock {
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  set(iso: string): void {
    this.time = Date.parse(iso);
  }
}

export function transformCalls(service: TestService) {
  const upload = async (table: string, data: string, key: string = KEYS.bob, isPrivate = false) => {
    const answer = await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: table, data, is_private: isPrivate }),
      key,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  };

  const createQuery = async (sql: string, key: string = KEYS.bob, extra: Record<string, unknown> = {}) => {
    const answer = await service.json<{ query_id: number }>('/v1/query', {
      method: 'POST',
      key,
      body: JSON.stringify({ name: 'q', query_sql: sql, ...extra }),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.query_id;
  };

  const waitFinished = async (executionId: string, key: string = KEYS.bob) => {
    for (;;) {
      const { body } = await service.json<Record<string, unknown>>(`/v1/execution/${executionId}/status`, {
        key,
      });
      if (body.is_execution_finished) return body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  /** Runs SQL as `key` and answers its rows (or the error of a refusal or failure). */
  const sql = async (text: string, key: string = KEYS.bob): Promise<{ rows?: unknown[]; error?: string }> => {
    const run = await service.json<{ execution_id?: string; error?: string }>('/v1/sql/execute', {
      method: 'POST',
      key,
      body: JSON.stringify({ sql: text }),
    });
    if (!run.body.execution_id) return { error: run.body.error ?? `status ${run.status}` };
    const status = await waitFinished(run.body.execution_id, key);
    if (status.state !== 'QUERY_STATE_COMPLETED') return { error: JSON.stringify(status.error) };
    const results = await service.json<{ result: { rows: unknown[] } }>(
      `/v1/execution/${run.body.execution_id}/results`,
      { key },
    );
    return { rows: results.body.result.rows };
  };

  const upsertView = (body: Record<string, unknown>, key: string = KEYS.bob) =>
    service.json<{ name?: string; execution_id?: string; error?: string }>('/v1/materialized-views', {
      method: 'POST',
      key,
      body: JSON.stringify(body),
    });

  const view = (name: string, key: string = KEYS.bob) =>
    service.json<Record<string, unknown>>(`/v1/materialized-views/${name}`, { key });

  /** Polls the view until `done` says so (its refreshes run in the background). */
  const waitView = async (
    name: string,
    done: (view: Record<string, unknown>) => boolean,
    key: string = KEYS.bob,
  ): Promise<Record<string, unknown>> => {
    for (let i = 0; i < 1500; i++) {
      const { body } = await view(name, key);
      if (done(body)) return body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`view ${name} never got there: ${JSON.stringify((await view(name, key)).body)}`);
  };

  return { upload, createQuery, waitFinished, sql, upsertView, view, waitView };
}
