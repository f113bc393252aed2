import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { FAMILIES, type HostileCase, hostileCases } from './generators.js';
import { type RawResponse, send } from './raw-http.js';

/**
 * More than a thousand malformed requests across every endpoint: each must be answered
 * with a 4xx and a JSON `{"error": "..."}` (never a 5xx, an HTML page or silence), and
 * afterwards every stored table, the catalog and the execution records must be exactly
 * as before.
 */

const SEED = Number(process.env.HOSTILE_SEED ?? 20240611);
const COUNT = Number(process.env.HOSTILE_COUNT ?? 1300);
const PARALLEL = 8;

let service: TestService;
let port: number;
let executionId: string;

async function ok(urlPath: string, init: RequestInit & { key?: string }, expected = 200): Promise<unknown> {
  const { status, body } = await service.json(urlPath, init);
  expect(status, `${urlPath}: ${JSON.stringify(body)}`).toBe(expected);
  return body;
}

beforeAll(async () => {
  // Hundreds of these requests send a wrong key from one address: the failed-authentication
  // limit (test/http/auth-failure-limit.test.ts) would answer most of them before the checks
  // under test here.
  service = await startTestService({
    DEMO_DATA: 'on',
    MAX_UPLOAD_BYTES: '1000000',
    AUTH_FAILURE_LIMIT: 'off',
  });
  port = Number(new URL(service.url).port);
  // The metrics query runs at start over the demo data; its result is what results requests read.
  const until = Date.now() + 30_000;
  for (;;) {
    const { body } = await service.json<{ state: string; execution_id: string }>(
      '/v1/query/3693850/results?limit=1',
    );
    if (body.state === 'QUERY_STATE_COMPLETED') {
      executionId = body.execution_id;
      break;
    }
    if (Date.now() > until) throw new Error(`the metrics query did not complete: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const json = { 'content-type': 'application/json' };
  await ok('/v1/table/upload/csv', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ table_name: 'notes', description: 'notes', data: 'id,label\n1,one\n2,two\n' }),
  });
  await ok(
    '/v1/table/create',
    {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        namespace: 'alice',
        table_name: 'events',
        schema: [
          { name: 'id', type: 'bigint', nullable: false },
          { name: 'label', type: 'varchar' },
          { name: 'amount', type: 'int256' },
          { name: 'at', type: 'timestamp' },
        ],
      }),
    },
    201,
  );
  await ok('/v1/table/alice/events/insert', {
    method: 'POST',
    headers: { 'content-type': 'text/csv' },
    body: `id,label,amount,at\n1,first,${'9'.repeat(70)},2024-01-01 00:00:00\n2,"second, quoted",-5,\n3,,,\n`,
  });
  await ok(
    '/v1/table/create',
    {
      method: 'POST',
      headers: json,
      key: KEYS.bob,
      body: JSON.stringify({
        namespace: 'bob',
        table_name: 'secrets',
        is_private: true,
        schema: [{ name: 'secret', type: 'varchar' }],
      }),
    },
    201,
  );
  await ok('/v1/table/bob/secrets/insert', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    key: KEYS.bob,
    body: '{"secret":"hunter2"}\n',
  });
}, 60_000);

afterAll(() => service?.stop());

/**
 * Every table of the database file (users', the catalog, executions, snapshots) as its
 * columns, row count and an order-independent hash of its rows.
 */
async function fingerprint(): Promise<Record<string, string>> {
  return service.database.read(async (session) => {
    const tables = await session.all<{ schema_name: string; table_name: string }>(
      `SELECT schema_name, table_name FROM duckdb_tables()
        WHERE database_name = current_database() ORDER BY schema_name, table_name`,
    );
    const print: Record<string, string> = {};
    for (const { schema_name: schema, table_name: table } of tables) {
      const name = `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;
      const columns = await session.all<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM duckdb_columns()
          WHERE database_name = current_database() AND schema_name = ? AND table_name = ? ORDER BY column_index`,
        [schema, table],
      );
      const [rows] = await session.all<{ n: bigint; h: string | null }>(
        `SELECT count(*) AS n, sum(hash(t)::HUGEINT)::VARCHAR AS h FROM ${name} t`,
      );
      print[`${schema}.${table}`] =
        `${columns.map((c) => `${c.column_name} ${c.data_type}`).join(', ')} | ${rows?.n} rows | ${rows?.h}`;
    }
    return print;
  });
}

interface Failure {
  case: HostileCase;
  problem: string;
}

function judge(response: RawResponse): string | undefined {
  if (response.status < 400 || response.status > 499) return `status ${response.status}`;
  if (!/^application\/json\b/.test(response.headers['content-type'] ?? ''))
    return `content type ${response.headers['content-type']}`;
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return 'a body that is not JSON';
  }
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error !== 'string' || error === '') return 'no "error" string in the body';
  return undefined;
}

async function waitForEmptyTmp(): Promise<string[]> {
  const tmp = path.join(service.dataDir, 'tmp');
  const until = Date.now() + 5_000;
  for (;;) {
    const left = fs.readdirSync(tmp);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('hostile inputs', () => {
  it(`answers ${COUNT} malformed requests with a 4xx JSON error each and changes nothing`, async () => {
    const before = await fingerprint();
    const cases = hostileCases(SEED, COUNT, { executionId });
    const failures: Failure[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const current = cases[next++] as HostileCase;
        try {
          const response = await send(port, current.request);
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          const problem = judge(response);
          if (problem)
            failures.push({
              case: current,
              problem: `${problem}: ${response.body.toString('utf8').slice(0, 200)}`,
            });
        } catch (error) {
          failures.push({ case: current, problem: `no answer: ${(error as Error).message.slice(0, 200)}` });
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));

    const report = failures
      .slice(0, 30)
      .map((f) => `  [${f.case.family}] ${f.case.label}: ${f.problem}`)
      .join('\n');
    expect(
      failures.length,
      `${failures.length} of ${cases.length} requests were not refused properly:\n${report}`,
    ).toBe(0);
    expect(new Set(cases.map((c) => c.family)).size).toBe(FAMILIES.length);
    // Each way of being wrong was reached, not only the first check (a missing key, say).
    expect([...statuses.keys()].sort()).toEqual([400, 401, 403, 404, 405, 409, 413, 415, 431]);

    expect(await fingerprint()).toEqual(before);
    expect(await waitForEmptyTmp()).toEqual([]);
    // Still serving.
    const health = await service.json<{ status: string }>('/health', { key: null });
    expect(health.body.status).toBe('ok');
    const { status } = await service.json('/v1/restaking/avs-stats?queryID=3693850&limit=3');
    expect(status).toBe(200);
  }, 120_000);
});
