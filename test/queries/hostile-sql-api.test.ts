import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../support/results.js';
import { startTestService, type TestService } from '../support/service.js';
import { databaseState } from './support/database-state.js';
import { HOSTILE_SQL, HOSTILE_SQL_TABLES, type HostileSql } from './support/hostile-sql.js';
import { finished, post } from './support/queries.js';

/**
 * The sandbox's hostile-SQL corpus end to end through the HTTP API, as a user would send it:
 * run with `POST /v1/sql/execute` and saved with `POST /v1/query` (then executed). Every
 * attempt is refused with a 4xx naming the problem, or runs and ends QUERY_STATE_FAILED; none
 * gets a 5xx; afterwards every table, the catalog and the data directory are as before.
 */

/** The corpus runs as alice with a premium key (she owns a private table). */
const KEYS = { alice: 'alice-premium-key-01', bob: 'bob-premium-key-0001', root: 'root-admin-key-00001' };

let service: TestService;

/** Everything users' SQL could have changed: user tables' rows, the catalog, the files. */
async function everything(): Promise<unknown> {
  const database = await service.database.read((session) =>
    databaseState(session, {
      // Results are made by design, and so are the service's records of executions and queries.
      skip: (schema, table) => schema === '_results' || (schema === '_service' && table !== 'tables'),
      settings: true,
    }),
  );
  const files = fs
    .readdirSync(service.dataDir, { recursive: true })
    .map(String)
    .filter((f) => !f.startsWith('warehouse.duckdb'));
  return { database, files: files.sort() };
}

beforeAll(async () => {
  service = await startTestService({
    API_KEYS: `${KEYS.alice}=alice:premium,${KEYS.bob}=bob:premium,${KEYS.root}=root:premium:admin`,
  });
  for (const { owner, table, isPrivate } of HOSTILE_SQL_TABLES) {
    const key = KEYS[owner as keyof typeof KEYS];
    const created = await service.json(
      '/v1/table/create',
      post(
        {
          namespace: owner,
          table_name: table,
          is_private: isPrivate,
          schema: [
            { name: 'who', type: 'varchar' },
            { name: 'n', type: 'bigint' },
          ],
        },
        key,
      ),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const inserted = await service.request(`/v1/table/${owner}/${table}/insert`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `who,n\n${owner}.${table},1\n`,
      key,
    });
    expect(inserted.status).toBe(200);
  }
});
afterAll(async () => {
  await service.stop();
});

/** What one attempt came to, by one way of sending it. */
async function attempt(
  entry: HostileSql,
  way: 'execute' | 'saved',
): Promise<{ status: number; error?: string }> {
  if (way === 'execute') {
    const { status, body } = await service.json<{ execution_id?: string; error?: string }>(
      '/v1/sql/execute',
      post({ sql: entry.sql }, KEYS.alice),
    );
    if (status !== 200 || !body.execution_id) return { status, ...(body.error ? { error: body.error } : {}) };
    const done: Envelope = await finished(service, body.execution_id, KEYS.alice);
    return {
      status: 200,
      error: done.state === 'QUERY_STATE_FAILED' ? done.error?.message : `ended ${done.state}`,
    };
  }
  const created = await service.json<{ query_id?: number; error?: string }>(
    '/v1/query',
    post({ name: entry.name, query_sql: entry.sql }, KEYS.alice),
  );
  if (created.status !== 200 || !created.body.query_id)
    return { status: created.status, ...(created.body.error ? { error: created.body.error } : {}) };
  const run = await service.json<{ execution_id?: string; error?: string }>(
    `/v1/query/${created.body.query_id}/execute`,
    post({}, KEYS.alice),
  );
  if (run.status !== 200 || !run.body.execution_id)
    return { status: run.status, ...(run.body.error ? { error: run.body.error } : {}) };
  const done: Envelope = await finished(service, run.body.execution_id, KEYS.alice);
  return {
    status: 200,
    error: done.state === 'QUERY_STATE_FAILED' ? done.error?.message : `ended ${done.state}`,
  };
}

describe('the hostile-SQL corpus through the HTTP API', () => {
  it('is refused or fails, entry by entry, by both ways in, and changes nothing', async () => {
    expect(HOSTILE_SQL.length).toBeGreaterThanOrEqual(60);
    const before = await everything();
    const unexpected: string[] = [];
    for (const entry of HOSTILE_SQL) {
      for (const way of ['execute', 'saved'] as const) {
        const outcome = await attempt(entry, way);
        const expected = 'refused' in entry.outcome ? entry.outcome.refused : entry.outcome.fails;
        const shape = 'refused' in entry.outcome ? outcome.status === 400 : outcome.status === 200;
        if (outcome.status >= 500 || !shape || !expected.test(outcome.error ?? ''))
          unexpected.push(`${entry.name} (${way}): ${outcome.status} ${outcome.error}`);
      }
    }
    expect(unexpected).toEqual([]);
    expect(await everything()).toEqual(before);
    expect(path.isAbsolute(service.dataDir)).toBe(true);
  });
});
