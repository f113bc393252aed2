import { afterEach, describe, expect, it } from 'vitest';
import {
  createQuery,
  execute,
  executeSql,
  finished,
  rowsOf,
  uploadTable,
} from '../queries/support/queries.js';
import { capturedLog } from '../support/log-lines.js';
import type { Envelope } from '../support/results.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

/**
 * A small result whose SQL gave a small one last time is held in memory, seen at once, and
 * its table written behind it (src/executions/small-result.ts). A client must not tell it
 * from a result stored the table's way: same rows, metadata, pages, filters, CSV, `query_<id>`,
 * and the same after a restart.
 */

let service: TestService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

type Line = { msg: string; executionId?: string; heldInMemory?: boolean };

async function start(dataDir = tempDir()) {
  const log = capturedLog<Line>('info');
  service = await startTestService({}, dataDir, {}, log.logger);
  return { s: service, log, dataDir };
}

/** Whether the run's completion, logged once its record has landed, says it was held in memory. */
async function heldInMemory(lines: readonly Line[], executionId: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const line = lines.find((l) => l.msg === 'execution completed' && l.executionId === executionId);
    if (line) return line.heldInMemory === true;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no completion logged for ${executionId}`);
}

/** What differs between two runs of the same SQL: their ids and times. */
const VOLATILE = new Set([
  'execution_id',
  'submitted_at',
  'execution_started_at',
  'execution_ended_at',
  'expires_at',
  'execution_time_millis',
  'pending_time_millis',
]);

function steady(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(steady);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !VOLATILE.has(key))
      .map(([key, v]) => [key, steady(v)]),
  );
}

/** Everything a client can read of a finished execution. */
async function everything(s: TestService, id: string, key: string = KEYS.alice) {
  const status = await finished(s, id, key);
  const page = await s.json<Envelope>(`/v1/execution/${id}/results`, { key });
  const filtered = await s.json<Envelope>(
    `/v1/execution/${id}/results?filters=n%20%3E%201&sort_by=n%20desc`,
    {
      key,
    },
  );
  const csv = await (await s.request(`/v1/execution/${id}/results/csv`, { key })).text();
  return { status: steady(status), page: steady(page.body), filtered: steady(filtered.body), csv };
}

const TYPED_SQL = `SELECT range AS n, range * 1.25 AS amount, CAST(range AS DECIMAL(18,2)) AS price,
  'row "' || range || '"' || chr(10) AS note, DATE '2024-01-01' + CAST(range AS INTEGER) AS day,
  TIMESTAMP '2024-01-01 00:00:00.123456' + INTERVAL (range) HOUR AS at, range % 2 = 0 AS even,
  CAST(range AS HUGEINT) * 10000000000000000 AS big, CASE WHEN range = 2 THEN NULL ELSE 'x' END AS maybe
  FROM range(5) ORDER BY n DESC`;

describe('small results held in memory', () => {
  it('are read as the same result stored the table way, and the second run of the same SQL is held', async () => {
    const { s, log } = await start();
    const first = await executeSql(s, TYPED_SQL);
    const before = await everything(s, first);
    const second = await executeSql(s, TYPED_SQL);
    const after = await everything(s, second);
    expect(await heldInMemory(log.lines, first)).toBe(false);
    expect(await heldInMemory(log.lines, second)).toBe(true);
    expect(after).toEqual(before);
    expect((after.page as { result: { rows: unknown[] } }).result.rows).toHaveLength(5);
  });

  it('serves a filtered page, a sample and Parquet right after the run is seen', async () => {
    const { s, log } = await start();
    const sql = 'SELECT range AS n FROM range(10)';
    await finished(s, await executeSql(s, sql));
    for (let i = 0; i < 5; i++) {
      const id = await executeSql(s, sql);
      const status = await finished(s, id);
      expect(status.state).toBe('QUERY_STATE_COMPLETED');
      // Straight to SQL on the table: it waits for the table, never a "table not found".
      const filtered = await s.json<Envelope>(`/v1/execution/${id}/results?filters=n%20%3E%3D%208`);
      expect(filtered.status).toBe(200);
      expect(filtered.body.result?.rows).toEqual([{ n: 8 }, { n: 9 }]);
      const sample = await s.json<Envelope>(`/v1/execution/${id}/results?sample_count=3`);
      expect(sample.body.result?.rows).toHaveLength(3);
      const parquet = await s.request(`/v1/execution/${id}/results/parquet`);
      expect(parquet.status).toBe(200);
      expect(
        Buffer.from(await parquet.arrayBuffer())
          .subarray(0, 4)
          .toString(),
      ).toBe('PAR1');
      expect(await heldInMemory(log.lines, id)).toBe(true);
    }
  });

  it("is read by another query's query_<id> as soon as it is seen", async () => {
    const { s, log } = await start();
    const source = await createQuery(s, { name: 'source', query_sql: 'SELECT range AS n FROM range(3)' });
    await finished(s, await execute(s, source));
    for (let i = 0; i < 3; i++) {
      const held = await execute(s, source);
      await finished(s, held);
      expect(await heldInMemory(log.lines, held)).toBe(true);
      const total = await executeSql(s, `SELECT sum(n) AS total FROM query_${source}`, KEYS.bob);
      expect(await rowsOf(s, total, KEYS.bob)).toEqual([{ total: 3 }]);
    }
  });

  it("holds a first run bounded by its LIMIT (the workspace's table preview), and stores the table's way what it cannot render", async () => {
    const { s, log } = await start();
    await uploadTable(s, 'preview', 'n,amount\n1,1.50\n2,2.25\n3,\n');
    const preview = await executeSql(s, 'SELECT *\nFROM dataset_preview\nLIMIT 100');
    const before = await everything(s, preview);
    expect(await heldInMemory(log.lines, preview)).toBe(true);
    expect((before.page as { result: { rows: unknown[] } }).result.rows).toEqual([
      { n: 1, amount: 1.5 },
      { n: 2, amount: 2.25 },
      { n: 3, amount: null },
    ]);
    // A list is left to DuckDB's renderer: run again the table's way, whole, and remembered.
    const sql = 'SELECT range AS n, [range, range + 1] AS pair FROM range(3) ORDER BY n LIMIT 2';
    for (let i = 0; i < 2; i++) {
      const lists = await executeSql(s, sql);
      const { page } = await everything(s, lists);
      expect((page as { result: { rows: unknown[] } }).result.rows).toEqual([
        { n: 0, pair: [0, 1] },
        { n: 1, pair: [1, 2] },
      ]);
      expect(await heldInMemory(log.lines, lists)).toBe(false);
    }
  });

  it('stores a result that grew past the small size the table way, whole', async () => {
    const { s, log } = await start();
    await uploadTable(s, 'growing', 'n\n1\n2\n3\n');
    const sql = 'SELECT n FROM dataset_growing ORDER BY n';
    await finished(s, await executeSql(s, sql));
    const rows = Array.from({ length: 1500 }, (_, i) => i + 1);
    await uploadTable(s, 'growing', `n\n${rows.join('\n')}\n`);
    const grown = await executeSql(s, sql);
    const status = await finished(s, grown);
    expect(status.state).toBe('QUERY_STATE_COMPLETED');
    expect(status.result_metadata?.total_row_count).toBe(1500);
    expect(await heldInMemory(log.lines, grown)).toBe(false);
    const { body } = await s.json<Envelope>(`/v1/execution/${grown}/results?offset=1498&limit=5`);
    expect(body.result?.rows).toEqual([{ n: 1499 }, { n: 1500 }]);
  });

  it('is kept, rows and all, across a restart', async () => {
    const { s, log, dataDir } = await start();
    await finished(s, await executeSql(s, TYPED_SQL));
    const held = await executeSql(s, TYPED_SQL);
    const before = await everything(s, held);
    expect(await heldInMemory(log.lines, held)).toBe(true);
    // Closed, not stopped: `stop` removes the data directory.
    await s.close();
    service = undefined;
    const again = await start(dataDir);

    expect(await everything(again.s, held)).toEqual(before);
  });
});
