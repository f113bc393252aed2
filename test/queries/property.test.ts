import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../support/results.js';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { executeSql, finished, uploadTable } from './support/queries.js';

/**
 * Property: a random read-only query over uploaded tables, run through the API (sandbox,
 * execution, snapshot, rendering), returns exactly what DuckDB returns for the same SQL run
 * directly on the same tables. Values are compared after the envelope's documented mapping
 * (DESIGN §5): integers within ±2^53 as numbers, larger ones as strings.
 *
 * Only integer arithmetic is aggregated: a double sum depends on the order DuckDB's threads
 * add things up, so two runs of one query may differ in the last bit.
 */

let service: TestService;

const TOKENS = ['stETH', 'rETH', 'ETHx', "o'ETH", 'cbETH'];

/** A fixed table: ids unique, groups repeating, some NULLs, integers past 2^53. */
function transfers(): string {
  const lines = ['id,token,qty,big,amount,flag,day'];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let id = 1; id <= 300; id++) {
    const token = TOKENS[next() % TOKENS.length] as string;
    const qty = next() % 5 === 0 ? '' : String((next() % 2001) - 1000);
    const big = String(BigInt(next()) * 9_007_199_254n + BigInt(id));
    const amount = ((next() % 100_000) / 100).toFixed(2);
    const flag = next() % 2 === 0 ? 'true' : 'false';
    const day = `2024-0${1 + (next() % 9)}-${String(1 + (next() % 28)).padStart(2, '0')}`;
    lines.push([id, token.includes("'") ? `"${token}"` : token, qty, big, amount, flag, day].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const T = 'alice.dataset_transfers';
const U = 'alice.dataset_tokens';

const integerColumn = fc.constantFrom('id', 'qty', 'big');

const predicate: fc.Arbitrary<string> = fc.letrec<{ p: string }>((tie) => ({
  p: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(
        integerColumn,
        fc.constantFrom('<', '<=', '=', '<>', '>', '>='),
        fc.integer({ min: -1000, max: 1000 }),
      )
      .map(([c, op, n]) => `${c} ${op} ${n}`),
    fc.constantFrom(...TOKENS).map((t) => `token = '${t.replaceAll("'", "''")}'`),
    fc.constantFrom(
      'flag',
      'NOT flag',
      'qty IS NULL',
      'qty IS NOT NULL',
      "day >= DATE '2024-05-01'",
      "token LIKE '%ETH'",
    ),
    fc
      .tuple(fc.integer({ min: 0, max: 900 }), fc.integer({ min: 0, max: 900 }))
      .map(([a, b]) => `amount BETWEEN ${Math.min(a, b)} AND ${Math.max(a, b)}`),
    fc.tuple(tie('p'), fc.constantFrom('AND', 'OR'), tie('p')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie('p').map((p) => `NOT (${p})`),
  ),
})).p;

// Not `id`: every projection query selects it first, and a name twice is renamed (`id_1`)
// in the stored result, as JSON objects cannot hold one key twice.
const projection = fc.oneof(
  fc.constantFrom('token', 'qty', 'big', 'amount', 'flag', 'day'),
  fc.constantFrom(
    'qty * 2 + id AS twice',
    'big - id AS shifted',
    'lower(token) AS low',
    'CASE WHEN flag THEN 1 ELSE 0 END AS bit',
    'round(amount, 1) AS rounded',
    'CAST(day AS VARCHAR) AS day_text',
    'length(token) AS len',
    'coalesce(qty, -1) AS q',
  ),
);

const aggregate = fc.constantFrom(
  'count(*) AS n',
  'sum(qty) AS total',
  'sum(big) AS huge',
  'min(amount) AS low',
  'max(amount) AS high',
  'count(DISTINCT day) AS days',
  'avg(qty) AS mean',
  'max(id) AS last',
  'CAST(min(day) AS VARCHAR) AS first_day',
);

const where = fc.option(predicate, { nil: undefined }).map((p) => (p ? ` WHERE ${p}` : ''));

const query: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.uniqueArray(projection, { minLength: 1, maxLength: 4 }),
      where,
      fc.option(fc.integer({ min: 0, max: 50 })),
    )
    .map(
      ([cols, w, limit]) =>
        `SELECT id, ${cols.join(', ')} FROM ${T}${w} ORDER BY id${limit === null ? '' : ` LIMIT ${limit}`}`,
    ),
  fc
    .tuple(
      fc.constantFrom('token', 'flag', 'day'),
      fc.uniqueArray(aggregate, { minLength: 1, maxLength: 4 }),
      where,
    )
    .map(([group, aggs, w]) => `SELECT ${group}, ${aggs.join(', ')} FROM ${T}${w} GROUP BY ${group}`),
  fc
    .tuple(where, fc.uniqueArray(aggregate, { minLength: 1, maxLength: 3 }))
    .map(([w, aggs]) => `WITH picked AS (SELECT * FROM ${T}${w}) SELECT ${aggs.join(', ')} FROM picked`),
  fc
    .tuple(predicate, predicate)
    .map(
      ([a, b]) =>
        `SELECT id, token FROM ${T} WHERE ${a} UNION ALL SELECT id, token FROM dune.${T} WHERE ${b}`,
    ),
  where.map(
    (w) =>
      `SELECT t.token, u.rank, count(*) AS n, sum(t.qty) AS total FROM ${T} t JOIN ${U} u ON t.token = u.token${w.replace(/\b(id|token|qty|big|amount|flag|day)\b/g, 't.$1')} GROUP BY t.token, u.rank`,
  ),
  fc.constant(`VALUES (1, 'a'), (2, 'b')`),
);

/** DuckDB's value as the envelope renders it (DESIGN §5). */
function rendered(value: unknown): unknown {
  if (typeof value === 'bigint')
    return value >= -(2n ** 53n) + 1n && value <= 2n ** 53n - 1n ? Number(value) : String(value);
  if (typeof value === 'number' && !Number.isFinite(value))
    return Number.isNaN(value) ? 'NaN' : String(value);
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return value;
}

const key = (row: unknown) => JSON.stringify(row);

beforeAll(async () => {
  service = await startTestService();
  await uploadTable(service, 'transfers', transfers());
  await uploadTable(
    service,
    'tokens',
    `token,rank\n${TOKENS.map((t, i) => `${t.includes("'") ? `"${t}"` : t},${i}`).join('\n')}\n`,
  );
});
afterAll(async () => {
  await service.stop();
});

describe('random read-only queries', () => {
  it('return through the API exactly what DuckDB returns run directly', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (sql) => {
        const direct = await service.database.read((session) => session.query(sql.replaceAll('dune.', '')));
        const expectedRows = direct.rows.map((row) =>
          Object.fromEntries(direct.columns.map((c, i) => [c.name, rendered(row[i])])),
        );
        const executionId = await executeSql(service, sql, KEYS.alice);
        const status = await finished(service, executionId);
        expect(status.state, `${sql}: ${JSON.stringify(status.error)}`).toBe('QUERY_STATE_COMPLETED');
        const { body } = await service.json<Envelope>(`/v1/execution/${executionId}/results`);
        const rows = body.result?.rows ?? [];
        expect(body.result?.metadata.column_names, sql).toEqual(direct.columns.map((c) => c.name));
        if (/ORDER BY id/.test(sql)) expect(rows, sql).toEqual(expectedRows);
        else expect(rows.map(key).sort(), sql).toEqual(expectedRows.map(key).sort());
      }),
      { numRuns: 60 },
    );
  });
});
