import { describe, expect, it } from 'vitest';
import { compileFilters, MAX_TEXT_BYTES, QueryLanguageError } from '../../src/filter-language/index.js';
import { COLUMNS } from './support/columns.js';

const VALID = COLUMNS.map((c) =>
  c.name === 'special, "col"' ? '"special, ""col"""' : c.name === 'in' ? '"in"' : c.name,
).join(', ');

function errorOf(filters: string): QueryLanguageError {
  try {
    compileFilters(filters, COLUMNS);
  } catch (error) {
    if (error instanceof QueryLanguageError) {
      return error;
    }
    throw error;
  }
  throw new Error(`accepted: ${filters}`);
}

type Case = [filters: string, message: string];

const check = ([filters, message]: Case) => {
  const error = errorOf(filters);
  expect(error.message).toBe(message);
  expect(error.parameter).toBe('filters');
  expect(error.message).toContain(`at position ${error.position}`);
};

describe('filters errors: names and values', () => {
  it.each<Case>([
    ['foo = 1', `filters: unknown column "foo" at position 0; valid columns: ${VALID}`],
    [
      'num_operators > 1 AND "Foo Bar" = 1',
      `filters: unknown column "Foo Bar" at position 22; valid columns: ${VALID}`,
    ],
    [
      "num_operators > 'abc'",
      "filters: expected a number for column num_operators (bigint), found 'abc' at position 16",
    ],
    [
      'num_operators > TRUE',
      'filters: expected a number for column num_operators (bigint), found TRUE at position 16',
    ],
    [
      'num_operators > 0x10',
      'filters: expected a number for column num_operators (bigint), found 0x10 at position 16',
    ],
    [
      "total_TVL < 'lots'",
      "filters: expected a number for column total_TVL (double), found 'lots' at position 12",
    ],
    [
      'avs_name = TRUE',
      "filters: expected a quoted string for column avs_name (varchar), found TRUE at position 11; quote it: 'TRUE'",
    ],
    ['active = 1', 'filters: expected TRUE or FALSE for column active (boolean), found 1 at position 9'],
    [
      "active = 'yes'",
      "filters: expected TRUE or FALSE for column active (boolean), found 'yes' at position 9",
    ],
    [
      "launched = '2024-02-30'",
      "filters: expected a date such as '2024-01-31' for column launched (date), found '2024-02-30' at position 11",
    ],
    [
      "updated_at > 'yesterday'",
      "filters: expected a timestamp such as '2024-01-31 12:00:00' for column updated_at (timestamp), found 'yesterday' at position 13",
    ],
    [
      "updated_at > '2024-01-01 00:00:00.1234567'",
      "filters: expected a timestamp with at most 6 fractional digits for column updated_at (timestamp), found '2024-01-01 00:00:00.1234567' at position 13",
    ],
    [
      'payload = 0xabc',
      'filters: expected bytes as 0x followed by an even number of hex digits for column payload (blob), found 0xabc at position 10',
    ],
    [
      "payload = 'abc'",
      "filters: expected bytes as 0x followed by an even number of hex digits for column payload (blob), found 'abc' at position 10",
    ],
    [
      'num_operators = NULL',
      "filters: NULL cannot be compared with '=' at position 16; write num_operators IS NULL",
    ],
    [
      'num_operators != null',
      "filters: NULL cannot be compared with '!=' at position 17; write num_operators IS NOT NULL",
    ],
    [
      'num_operators > NULL',
      "filters: NULL cannot be compared with '>' at position 16; write num_operators IS NULL or IS NOT NULL",
    ],
    [
      "avs_name IN ('a', NULL)",
      'filters: NULL cannot be used in an IN list at position 18; test for it with avs_name IS NULL',
    ],
    [
      'num_operators BETWEEN NULL AND 1',
      'filters: NULL cannot be used with BETWEEN at position 22; test for it with num_operators IS NULL',
    ],
    ["num_operators LIKE '1%'", 'filters: LIKE needs a text column; num_operators is bigint at position 0'],
    [
      'avs_name LIKE 5',
      "filters: expected a quoted pattern after LIKE, found 5 at position 14; for example 'eigen%' (% matches any text, _ one character)",
    ],
    ['num_operators = 1e2000', 'filters: number with more than 1000 digits at position 16'],
    [
      "avs_name ILIKE 'a\u0000%'",
      'filters: ILIKE patterns cannot contain the NUL character (U+0000) at position 17',
    ],
  ])('%s', (...c) => check(c));
});

describe('filters errors: what jsep accepts but the grammar does not', () => {
  it.each<Case>([
    [
      "lower(avs_name) = 'x'",
      'filters: function calls are not supported: lower(…) at position 0; compare a column with a value: col = 1',
    ],
    [
      "avs_name = upper('x')",
      'filters: function calls are not supported: upper(…) at position 11; compare a column with a value: col = 1',
    ],
    [
      'avs_name = total_TVL',
      "filters: expected a value after '=', found the column total_TVL at position 11; comparing two columns is not supported; to compare with text, quote it: 'total_TVL'",
    ],
    [
      'avs_name = EigenDA',
      "filters: expected a value after '=', found the column EigenDA at position 11; comparing two columns is not supported; to compare with text, quote it: 'EigenDA'",
    ],
    [
      'avs_name IN (total_TVL)',
      "filters: expected a value after IN, found the column total_TVL at position 13; comparing two columns is not supported; to compare with text, quote it: 'total_TVL'",
    ],
    [
      'a.b = 1',
      'filters: unexpected \'.\': member access is not supported at position 1; double-quote a column name that contains a dot: "a.b"',
    ],
    [
      '"a".b.c = 1',
      'filters: unexpected \'.\': member access is not supported at position 3; double-quote a column name that contains a dot: "a.b"',
    ],
    [
      "avs_name = 'x' num_operators = 1",
      "filters: expected AND, OR or the end of the condition, found 'num_operators' at position 15",
    ],
    [
      "avs_name = 'x', num_operators = 1",
      "filters: expected AND, OR or the end of the condition, found ',' at position 14",
    ],
    [
      "(avs_name = 'x', num_operators = 1)",
      "filters: expected AND, OR or the end of the condition, found ',' at position 15",
    ],
    ["avs_name IN ('a') ('b')", "filters: unexpected '(' at position 18; join conditions with AND or OR"],
    [
      'num_operators = 1 = 2',
      "filters: unexpected '=' after a complete condition at position 18; join conditions with AND or OR",
    ],
    [
      '5 = num_operators',
      "filters: expected a column name before '=', found the value 5 at position 0; the column comes first: num_operators > 10",
    ],
    [
      'num_operators',
      "filters: expected an operator after column num_operators at position 13; for example = 1, IN (1, 2), LIKE 'a%' or IS NULL",
    ],
    [
      'TRUE',
      'filters: expected a condition, found the value TRUE at position 0; write column operator value, for example num_operators > 10',
    ],
    [
      'NOT num_operators',
      "filters: expected an operator after column num_operators at position 17; for example = 1, IN (1, 2), LIKE 'a%' or IS NULL",
    ],
    ['num_operators = NOT 1', "filters: expected a value after '=', found NOT at position 16"],
    ['num_operators NOT = 1', 'filters: expected IN, LIKE, ILIKE or BETWEEN after NOT at position 14'],
    ['num_operators = (1, 2)', "filters: expected a value after '=', found '(' at position 16"],
    ['this = 1', `filters: unknown column "this" at position 0; valid columns: ${VALID}`],
    [
      'num_operators + 1 > 2',
      "filters: unexpected character '+' at position 14; arithmetic is not supported",
    ],
    ['num_operators == 1', "filters: unexpected '==' at position 14; write '=' to compare"],
    ['num_operators = 1 && active = TRUE', "filters: unexpected '&&' at position 18; write AND"],
    ['num_operators = 1 || active = TRUE', "filters: unexpected '||' at position 18; write OR"],
    ['!active', "filters: unexpected character '!' at position 0; write NOT, or != to compare"],
    ['active ? 1 : 2', "filters: unexpected character '?' at position 7"],
    [
      'avs_name[0] = 1',
      "filters: unexpected character '[' at position 8; IN lists are written in parentheses: col IN (1, 2)",
    ],
    [
      "avs_name = 'x'; DROP TABLE t",
      "filters: unexpected character ';' at position 14; semicolons are not part of the language",
    ],
    [
      '`avs_name` = 1',
      'filters: unexpected character \'`\' at position 0; double-quote column names: "my column"',
    ],
    [
      'avs_name = \u2018x\u2019',
      "filters: unexpected character '\u2018' at position 11; quote strings with ' (U+0027)",
    ],
    [
      '\u201cavs_name\u201d = 1',
      "filters: unexpected character '\u201c' at position 0; quote column names with \" (U+0022)",
    ],
    ['$1 = 1', "filters: unexpected character '$' at position 0"],
    ['avs_name = \u0000', "filters: unexpected character '\\u0000' at position 11"],
  ])('%s', (...c) => check(c));
});

describe('filters errors: structure', () => {
  it.each<Case>([
    [
      '',
      "filters: expected a condition at position 0; for example num_operators > 10 AND avs_name ILIKE 'eigen%'",
    ],
    [
      '  \n ',
      "filters: expected a condition at position 0; for example num_operators > 10 AND avs_name ILIKE 'eigen%'",
    ],
    ['num_operators >', "filters: expected a value after '>' at position 15"],
    ['num_operators > 1 AND', 'filters: expected a condition after AND at position 21'],
    [
      'num_operators > 1 OR OR active = TRUE',
      'filters: expected a condition after OR, found OR at position 21',
    ],
    ['AND num_operators > 1', 'filters: expected a condition, found AND at position 0'],
    ['IN (1)', 'filters: expected a column name, found IN at position 0'],
    ['NOT', 'filters: expected a condition after NOT at position 3'],
    ['num_operators > 1 AND NOT', 'filters: expected a condition after NOT at position 25'],
    ['(num_operators > 1', "filters: unclosed '(' at position 0; expected ')'"],
    ['num_operators > 1)', "filters: unexpected ')' without a matching '(' at position 17"],
    ['()', "filters: expected a condition inside '( )' at position 1"],
    ['avs_name IN ()', 'filters: empty IN list at position 13; write at least one value: col IN (1)'],
    ['avs_name NOT IN ( )', 'filters: empty IN list at position 18; write at least one value: col IN (1)'],
    ["avs_name IN ('a',)", "filters: expected a value after ',' at position 17"],
    ["avs_name IN ('a',,'b')", "filters: expected a value before ',' at position 17"],
    ["avs_name IN ('a' 'b')", "filters: expected ',' or ')' in the IN list, found 'b' at position 17"],
    ['num_operators IN (1, 2 3)', "filters: expected ',' or ')' in the IN list, found '3' at position 23"],
    ["avs_name IN 'a'", "filters: expected '(' after IN at position 12; write a list: col IN (1, 2)"],
    ['num_operators BETWEEN 1', 'filters: expected AND to complete BETWEEN … AND … at position 23'],
    ['num_operators BETWEEN 1 OR 2', 'filters: expected AND to complete BETWEEN … AND … at position 24'],
    ['num_operators BETWEEN 1 AND', 'filters: expected a value after AND at position 27'],
    ['avs_name IS', 'filters: expected NULL or NOT NULL after IS at position 11'],
    ['avs_name IS 5', 'filters: expected NULL or NOT NULL after IS at position 12'],
    ['avs_name IS NOT TRUE', 'filters: expected NULL after IS NOT at position 16'],
    [
      "avs_name = 'unterminated",
      "filters: unterminated string at position 11; close it with ', and write '' for a quote inside it",
    ],
    [
      '"avs_name = 1',
      'filters: unterminated column name at position 0; close it with ", and write "" or \\" for a quote inside it',
    ],
    ['"" = 1', 'filters: empty column name "" at position 0'],
    ['num_operators = 12abc', "filters: invalid number '12abc' at position 16"],
    ['num_operators = 1.2.3', "filters: invalid number '1.2.3' at position 16"],
    [
      'avs_name = 0x12zz',
      "filters: invalid hex literal '0x12zz' at position 11; write 0x followed by hex digits",
    ],
  ])('%s', (...c) => check(c));
});

describe('filters errors: the first thing wrong in reading order', () => {
  it.each<Case>([
    [', num_operators = 1', "filters: expected a condition, found ',' at position 0"],
    ['num_operators = 1,', "filters: expected AND, OR or the end of the condition, found ',' at position 17"],
    ['(num_operators = 1,)', "filters: expected a condition after ',', found ')' at position 19"],
    ['NOT IN (1)', 'filters: expected a column name, found NOT IN at position 0'],
    ['num_operators BETWEEN 1 2 AND 3', 'filters: expected AND to complete BETWEEN … AND … at position 24'],
    [
      "avs_name IN ('a' AND active = TRUE)",
      "filters: expected ',' or ')' in the IN list, found AND at position 17",
    ],
    [
      'num_operators = avs_name AND (',
      "filters: expected a value after '=', found the column avs_name at position 16; comparing two columns is not supported; to compare with text, quote it: 'avs_name'",
    ],
    ['(avs_name =', "filters: unclosed '(' at position 0; expected ')'"],
    ['(num_operators = 1 AND NOT', "filters: unclosed '(' at position 0; expected ')'"],
  ])('%s', (...c) => check(c));
});

describe('filters errors: limits', () => {
  it('refuses more than 4 KB, pointing at the first character past the limit', () => {
    const text = `avs_name = '${'x'.repeat(MAX_TEXT_BYTES)}'`;
    expect(errorOf(text).message).toBe(
      'filters: text longer than 4096 bytes at position 4096; shorten the expression',
    );
    expect(() => compileFilters(`avs_name = '${'x'.repeat(MAX_TEXT_BYTES - 13)}'`, COLUMNS)).not.toThrow();
  });

  it('counts bytes, not characters', () => {
    const text = `avs_name = '${'é'.repeat(2100)}'`;
    expect(errorOf(text).message).toMatch(/^filters: text longer than 4096 bytes at position \d+/);
    // 12 bytes, then 1,021 characters of 4 bytes fill 4,096: the next one is past the limit.
    expect(errorOf(`avs_name = '${'😀'.repeat(1022)}'`).position).toBe(12 + 1021);
  });

  it('allows 32 levels of nesting and refuses the 33rd, counting each ( and each NOT', () => {
    expect(() =>
      compileFilters(`${'('.repeat(32)}num_operators = 1${')'.repeat(32)}`, COLUMNS),
    ).not.toThrow();
    expect(errorOf(`${'('.repeat(33)}num_operators = 1${')'.repeat(33)}`).message).toBe(
      'filters: nesting deeper than 32 levels at position 32; count each ( and each NOT',
    );
    expect(() => compileFilters(`${'NOT '.repeat(32)}num_operators = 1`, COLUMNS)).not.toThrow();
    expect(errorOf(`${'NOT '.repeat(33)}num_operators = 1`).position).toBe(128);
    expect(errorOf(`${'NOT ('.repeat(17)}num_operators = 1${')'.repeat(17)}`).position).toBe(80);
  });

  it('answers 100,000 parentheses with a clean error, quickly', () => {
    const started = performance.now();
    const error = errorOf(`${'('.repeat(100_000)}num_operators = 1${')'.repeat(100_000)}`);
    expect(error.message).toMatch(/^filters: text longer than 4096 bytes/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('answers nesting too deep but short with a clean error before parsing', () => {
    expect(errorOf('('.repeat(4000)).message).toBe(
      'filters: nesting deeper than 32 levels at position 32; count each ( and each NOT',
    );
    expect(errorOf('NOT '.repeat(1000)).position).toBe(128);
  });

  it('allows 1,000 items in an IN list and refuses the 1,001st', () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => i).join(',');
    expect(compileFilters(`num_operators IN (${items(1000)})`, COLUMNS).params).toHaveLength(1000);
    const error = errorOf(`num_operators IN (${items(1001)})`);
    expect(error.message).toBe(
      `filters: IN list longer than 1000 items at position ${18 + items(1000).length + 1}`,
    );
  });

  it('keeps echoed input short', () => {
    const name = 'x'.repeat(3000);
    expect(errorOf(`${name} = 1`).message).toMatch(/^filters: unknown column "x{40}…" at position 0/);
  });
});

describe('filters errors: positions are characters of the original text', () => {
  it('counts a character outside the BMP once', () => {
    expect(errorOf("avs_name = '😀😀' AND foo = 1").position).toBe(20);
  });

  it('maps positions through keyword rewriting, NOT grouping and IN lists', () => {
    expect(errorOf("NOT   avs_name  NoT   In  ('a', 'b')  AnD  foo = 1").position).toBe(43);
    expect(errorOf('num_operators NOT BETWEEN 1 AND 2 AND NOT (active = 5)').position).toBe(52);
  });

  it('refuses a lone surrogate, which cannot travel as UTF-8', () => {
    expect(errorOf("avs_name = 'a\uD800b'").message).toBe(
      'filters: invalid character (an unpaired UTF-16 surrogate) at position 13',
    );
  });
});

describe('QueryLanguageError', () => {
  it('is a plain Error carrying the parameter and position', () => {
    const error = errorOf('foo = 1');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('QueryLanguageError');
    expect(error.parameter).toBe('filters');
    expect(error.position).toBe(0);
  });
});
