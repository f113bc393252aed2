import fc from 'fast-check';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { executeSql, finished, uploadTable } from '../queries/support/queries.js';
import { connectPg, startPgService } from '../support/pg-wire.js';
import type { Envelope } from '../support/results.js';
import type { TestService } from '../support/service.js';

/**
 * Property: the same SQL gives the same rows through the Postgres wire as through
 * `POST /v1/sql/execute` and its results. The two render values differently (PostgreSQL's
 * text; the envelope's JSON, DESIGN §5), so each value is brought to one form by its column's
 * type before comparing: numbers by value, timestamps to the millisecond the envelope keeps,
 * bytea's `\x` as the envelope's `0x`.
 */

let service: TestService & { pgPort: number };
let client: pg.Client;

const TOKENS = ['stETH', 'rETH', "o'ETH", 'cbETH', 'ünï'];

function transfers(): string {
  const lines = ['id,token,qty,big,amount,flag,day'];
  let seed = 11;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed;
  };
  for (let id = 1; id <= 200; id++) {
    const token = TOKENS[next() % TOKENS.length] as string;
    const qty = next() % 5 === 0 ? '' : String((next() % 2001) - 1000);
    const big = String(BigInt(next()) * 9_007_199_254n + BigInt(id));
    const amount = ((next() % 100_000) / 100).toFixed(2);
    const day = `2024-0${1 + (next() % 9)}-${String(1 + (next() % 28)).padStart(2, '0')}`;
    lines.push(
      [id, token.includes("'") ? `"${token}"` : token, qty, big, amount, next() % 2 === 0, day].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

const T = 'alice.dataset_transfers';

const projection = fc.constantFrom(
  'token',
  'qty',
  'big',
  'amount',
  'flag',
  'day',
  'qty / 7 AS ratio',
  'big * 1000000000000 AS huge',
  'CAST(amount AS DECIMAL(12, 2)) AS exact',
  'CAST(big AS DECIMAL(38, 4)) / 3 AS wide',
  'CAST(day AS TIMESTAMP) + INTERVAL (id * 1001) MILLISECOND AS ts',
  'CAST(day AS TIMESTAMPTZ) AS tz',
  'encode(token) AS bytes',
  'upper(token) AS shout',
  'CASE WHEN flag THEN NULL ELSE amount * 1e300 END AS extreme',
  'CAST(id AS SMALLINT) AS small',
);

const predicate = fc.constantFrom(
  '',
  ' WHERE flag',
  ' WHERE qty > 0',
  " WHERE token = 'o''ETH'",
  ' WHERE qty IS NULL',
  " WHERE day >= DATE '2024-05-01'",
  ' WHERE amount BETWEEN 100 AND 500',
);

const query = fc.oneof(
  fc
    .tuple(
      fc.uniqueArray(projection, { minLength: 1, maxLength: 5 }),
      predicate,
      fc.integer({ min: 0, max: 60 }),
    )
    .map(
      ([cols, where, limit]) => `SELECT id, ${cols.join(', ')} FROM ${T}${where} ORDER BY id LIMIT ${limit}`,
    ),
  fc
    .tuple(fc.constantFrom('token', 'flag', 'day'), predicate)
    .map(
      ([group, where]) =>
        `SELECT ${group}, count(*) AS n, sum(qty) AS total, sum(big) AS huge, max(amount) AS high FROM ${T}${where} GROUP BY ${group} ORDER BY ${group}`,
    ),
);

/** A wire value (PostgreSQL's text) and an envelope value in one comparable form, by the wire's type OID. */
function canonical(oid: number, wire: string | null, json: unknown): [unknown, unknown] {
  if (wire === null || json === null) return [wire, json];
  switch (oid) {
    case 16:
      return [wire === 't', json];
    case 20:
    case 21:
    case 23:
      return [wire, String(json)];
    case 701:
    case 700:
      return typeof json === 'number' ? [Number(wire), json] : [wire, json];
    case 1700:
      return typeof json === 'number' ? [Number(wire), json] : [wire, String(json)];
    case 1114:
    case 1184: {
      // Wire: 2024-01-01 12:00:00.5[+00]; envelope: 2024-01-01 12:00:00.500 UTC.
      const [date, time = ''] = wire.replace(/\+00$/, '').split(' ');
      const [clock, fraction = ''] = time.split('.');
      return [`${date} ${clock}.${fraction.padEnd(3, '0').slice(0, 3)} UTC`, json];
    }
    case 17:
      return [`0x${wire.slice(2)}`, json];
    default:
      return [wire, json];
  }
}

beforeAll(async () => {
  service = await startPgService();
  await uploadTable(service, 'transfers', transfers());
  client = await connectPg(service.pgPort);
});

describe('the same SQL through the wire and through /v1/sql/execute', () => {
  it('gives the same columns and the same rows', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (sql) => {
        const wire = await client.query({
          text: sql,
          rowMode: 'array',
          types: { getTypeParser: () => (value: string) => value },
        });
        const executionId = await executeSql(service, sql);
        const status = await finished(service, executionId);
        expect(status.state, `${sql}: ${JSON.stringify(status.error)}`).toBe('QUERY_STATE_COMPLETED');
        const { body } = await service.json<Envelope>(
          `/v1/execution/${executionId}/results?ignore_max_datapoints_per_request=true`,
        );
        const names = (body.result?.metadata.column_names ?? []) as string[];
        expect(
          wire.fields.map((f) => f.name),
          sql,
        ).toEqual(names);
        const httpRows = (body.result?.rows ?? []) as Record<string, unknown>[];
        expect(wire.rows.length, sql).toBe(httpRows.length);
        wire.rows.forEach((row: (string | null)[], r) => {
          wire.fields.forEach((field, c) => {
            const [a, b] = canonical(field.dataTypeID, row[c] ?? null, httpRows[r]?.[names[c] as string]);
            expect(a, `${sql} row ${r} column ${field.name}`).toEqual(b);
          });
        });
      }),
      { numRuns: 60 },
    );
  });
});
