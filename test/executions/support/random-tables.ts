import type { DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';

/**
 * Random results for property tests of the row renderers and byte counts: up to 20 rows of
 * text (any code point but NUL), a double (NaN and infinities included) and a BIGINT, NULLs
 * among them, the text column under a random name.
 */
export const randomRows = fc.array(
  fc.record({
    text: fc.option(fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !s.includes('\u0000'))),
    number: fc.option(fc.double({ noNaN: false })),
    integer: fc.option(fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n })),
  }),
  { maxLength: 20 },
);

export type RandomRows = typeof randomRows extends fc.Arbitrary<infer T> ? T : never;

/** A name for the text column: any but NUL, and none of the others' (nor `rowid`). */
export const randomName = fc
  .string({ minLength: 1, maxLength: 8 })
  .filter((s) => !s.includes('\u0000') && !['rowid', 'd', 'i'].includes(s.toLowerCase()));

/** Creates `table` with columns `name` (VARCHAR), `d` (DOUBLE) and `i` (BIGINT) holding `rows`. */
export async function createRandomTable(
  connection: DuckDBConnection,
  table: string,
  rows: RandomRows,
  name: string,
): Promise<void> {
  const literal = (value: string | null) => (value === null ? 'NULL' : `'${value.replaceAll("'", "''")}'`);
  const values = rows.map(
    (r) =>
      `(${literal(r.text)}, ${r.number === null ? 'NULL' : `${literal(String(r.number))}::DOUBLE`}, ${r.integer === null ? 'NULL' : `${r.integer}::BIGINT`})`,
  );
  const quoted = `"${name.replaceAll('"', '""')}"`;
  await connection.run(
    values.length === 0
      ? `CREATE TABLE ${table} (${quoted} VARCHAR, d DOUBLE, i BIGINT)`
      : `CREATE TABLE ${table} AS SELECT * FROM (VALUES ${values.join(', ')}) v(${quoted}, d, i)`,
  );
}

/** Runs `check` on random tables (`randomRows` under a `randomName`), each made on `connection`. */
export async function forRandomTables(
  connection: DuckDBConnection,
  check: (table: string) => Promise<void>,
  numRuns: number,
): Promise<void> {
  let n = 0;
  await fc.assert(
    fc.asyncProperty(randomRows, randomName, async (rows, name) => {
      const table = `r${n++}`;
      await createRandomTable(connection, table, rows, name);
      await check(table);
    }),
    { numRuns },
  );
}
