import { expect } from 'vitest';
import { type CompiledSql, quoteIdentifier } from '../../../src/filter-language/index.js';

/** Every word the compiler may write. Anything else in the SQL would have come from the client. */
const SQL_WORDS = new Set([
  'AND',
  'OR',
  'NOT',
  'IN',
  'LIKE',
  'ILIKE',
  'IS',
  'NULL',
  'BETWEEN',
  'CAST',
  'AS',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'END',
  'TRUE',
  'FALSE',
  'from_hex',
  'TINYINT',
  'SMALLINT',
  'INTEGER',
  'BIGINT',
  'HUGEINT',
  'UTINYINT',
  'USMALLINT',
  'UINTEGER',
  'UBIGINT',
  'UHUGEINT',
  'BIGNUM',
  'DOUBLE',
  'VARCHAR',
  'DATE',
  'TIMESTAMP',
  'TIMESTAMPTZ',
  'TIMESTAMP_NS',
]);

/**
 * Asserts that compiled SQL holds nothing of the client's but column names: once the quoted
 * names of the real columns and `DECIMAL(p,s)` are removed, only the compiler's own words,
 * `?` and punctuation remain, and there is one parameter per `?`.
 */
export function expectOnlyTrustedSql(compiled: CompiledSql, columnNames: readonly string[]): void {
  let rest = compiled.sql;
  for (const name of [...columnNames].sort((a, b) => b.length - a.length)) {
    rest = rest.replaceAll(quoteIdentifier(name), ' ');
  }
  rest = rest.replace(/DECIMAL\(\d+,\d+\)/g, ' ');
  expect(rest, compiled.sql).toMatch(/^[A-Za-z_ ?(),<>=!]*$/);
  for (const word of rest.match(/[A-Za-z_]+/g) ?? []) {
    expect(SQL_WORDS.has(word), `unexpected word ${word} in ${compiled.sql}`).toBe(true);
  }
  expect(compiled.params.length).toBe((rest.match(/\?/g) ?? []).length);
}
