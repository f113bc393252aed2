import { describe, expect, it } from 'vitest';
import { compileFilters, type SqlParam } from '../../src/filter-language/index.js';
import { COLUMNS } from './support/columns.js';

type Case = [filters: string, sql: string, params: SqlParam[]];

const check = ([filters, sql, params]: Case) => {
  expect(compileFilters(filters, COLUMNS)).toEqual({ sql, params });
};

const N = '"num_operators"';
const NAME = '"avs_name"';
const TVL = '"total_TVL"';
const BIGINT = 'CAST(? AS BIGINT)';
const DOUBLE = 'CAST(? AS DOUBLE)';

describe('compileFilters: operators', () => {
  it.each<Case>([
    ['num_operators = 5', `${N} = ${BIGINT}`, [5]],
    ['num_operators != 5', `${N} <> ${BIGINT}`, [5]],
    ['num_operators <> 5', `${N} <> ${BIGINT}`, [5]],
    ['num_operators < 5', `${N} < ${BIGINT}`, [5]],
    ['num_operators <= 5', `${N} <= ${BIGINT}`, [5]],
    ['num_operators > 5', `${N} > ${BIGINT}`, [5]],
    ['num_operators >= 5', `${N} >= ${BIGINT}`, [5]],
    ["avs_name IN ('EigenDA', 'Lagrange')", `${NAME} IN (?, ?)`, ['EigenDA', 'Lagrange']],
    ["avs_name IN ('EigenDA')", `${NAME} IN (?)`, ['EigenDA']],
    ["avs_name NOT IN ('EigenDA')", `${NAME} NOT IN (?)`, ['EigenDA']],
    ["avs_name LIKE 'Eigen%'", `${NAME} LIKE ?`, ['Eigen%']],
    ["avs_name NOT LIKE 'Eigen%'", `${NAME} NOT LIKE ?`, ['Eigen%']],
    ["avs_name ILIKE 'eigen_a'", `${NAME} ILIKE ?`, ['eigen_a']],
    ["avs_name NOT ILIKE 'eigen%'", `${NAME} NOT ILIKE ?`, ['eigen%']],
    ['avs_name IS NULL', `${NAME} IS NULL`, []],
    ['avs_name IS NOT NULL', `${NAME} IS NOT NULL`, []],
    ['num_operators BETWEEN 1 AND 10', `${N} BETWEEN ${BIGINT} AND ${BIGINT}`, [1, 10]],
    ['num_operators NOT BETWEEN 1 AND 10', `${N} NOT BETWEEN ${BIGINT} AND ${BIGINT}`, [1, 10]],
    ["num_operators > 5 AND avs_name = 'x'", `(${N} > ${BIGINT} AND ${NAME} = ?)`, [5, 'x']],
    ["num_operators > 5 OR avs_name = 'x'", `(${N} > ${BIGINT} OR ${NAME} = ?)`, [5, 'x']],
    ['NOT num_operators > 5', `(NOT ${N} > ${BIGINT})`, [5]],
    ['(num_operators > 5)', `${N} > ${BIGINT}`, [5]],
    ['((((num_operators > 5))))', `${N} > ${BIGINT}`, [5]],
    ['(num_operators) = (5)', `${N} = ${BIGINT}`, [5]],
    [
      '((num_operators)) IN ((5), 6) OR (avs_name) IS NULL',
      `(${N} IN (${BIGINT}, ${BIGINT}) OR ${NAME} IS NULL)`,
      [5, 6],
    ],
    ['num_operators>5', `${N} > ${BIGINT}`, [5]],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: keywords in any case', () => {
  it.each<Case>([
    ['num_operators between 1 and 10', `${N} BETWEEN ${BIGINT} AND ${BIGINT}`, [1, 10]],
    ['num_operators BeTwEeN 1 aNd 10', `${N} BETWEEN ${BIGINT} AND ${BIGINT}`, [1, 10]],
    ["avs_name nOt In ('x')", `${NAME} NOT IN (?)`, ['x']],
    ["avs_name not ilike 'x'", `${NAME} NOT ILIKE ?`, ['x']],
    ['avs_name iS nOt NuLl', `${NAME} IS NOT NULL`, []],
    ["not avs_name = 'a' Or avs_name = 'b'", `((NOT ${NAME} = ?) OR ${NAME} = ?)`, ['a', 'b']],
    ['active = tRuE', '"active" = ?', [true]],
    ['active = False', '"active" = ?', [false]],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: precedence NOT > AND > OR, comparisons tighter than NOT', () => {
  const A = `${N} = ${BIGINT}`;
  it.each<Case>([
    ['num_operators = 1 OR num_operators = 2 AND num_operators = 3', `(${A} OR (${A} AND ${A}))`, [1, 2, 3]],
    ['num_operators = 1 AND num_operators = 2 OR num_operators = 3', `((${A} AND ${A}) OR ${A})`, [1, 2, 3]],
    [
      '(num_operators = 1 OR num_operators = 2) AND num_operators = 3',
      `((${A} OR ${A}) AND ${A})`,
      [1, 2, 3],
    ],
    ['NOT num_operators = 1 AND num_operators = 2', `((NOT ${A}) AND ${A})`, [1, 2]],
    ['NOT num_operators = 1 OR num_operators = 2', `((NOT ${A}) OR ${A})`, [1, 2]],
    ['NOT (num_operators = 1 OR num_operators = 2)', `(NOT (${A} OR ${A}))`, [1, 2]],
    [
      'num_operators = 1 AND NOT num_operators = 2 OR num_operators = 3',
      `((${A} AND (NOT ${A})) OR ${A})`,
      [1, 2, 3],
    ],
    ['NOT NOT num_operators = 1', `(NOT (NOT ${A}))`, [1]],
    [
      'num_operators = 1 AND num_operators = 2 AND num_operators = 3 AND num_operators = 4',
      `(${A} AND ${A} AND ${A} AND ${A})`,
      [1, 2, 3, 4],
    ],
    [
      'num_operators BETWEEN 1 AND 2 AND num_operators = 3',
      `(${N} BETWEEN ${BIGINT} AND ${BIGINT} AND ${A})`,
      [1, 2, 3],
    ],
    [
      'NOT num_operators BETWEEN 1 AND 2 AND num_operators = 3',
      `((NOT ${N} BETWEEN ${BIGINT} AND ${BIGINT}) AND ${A})`,
      [1, 2, 3],
    ],
    [
      'num_operators BETWEEN 1 AND 2 OR num_operators BETWEEN (3) AND 4',
      `(${N} BETWEEN ${BIGINT} AND ${BIGINT} OR ${N} BETWEEN ${BIGINT} AND ${BIGINT})`,
      [1, 2, 3, 4],
    ],
    [
      "NOT avs_name IN ('a') AND NOT avs_name LIKE 'b%'",
      `((NOT ${NAME} IN (?)) AND (NOT ${NAME} LIKE ?))`,
      ['a', 'b%'],
    ],
    ['NOT (NOT (num_operators = 1))', `(NOT (NOT ${A}))`, [1]],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: string literals', () => {
  it.each<Case>([
    ["avs_name = 'EigenDA'", `${NAME} = ?`, ['EigenDA']],
    ["avs_name = 'it''s'", `${NAME} = ?`, ["it's"]],
    ["avs_name = ''''", `${NAME} = ?`, ["'"]],
    ["avs_name = ''", `${NAME} = ?`, ['']],
    ["avs_name = 'back\\slash'", `${NAME} = ?`, ['back\\slash']],
    ['avs_name = \'double "quotes"\'', `${NAME} = ?`, ['double "quotes"']],
    ["avs_name = 'line\nbreak'", `${NAME} = ?`, ['line\nbreak']],
    ["avs_name = 'Ωμέγα 😀'", `${NAME} = ?`, ['Ωμέγα 😀']],
    ["avs_name = 'x'' OR ''1''=''1'", `${NAME} = ?`, ["x' OR '1'='1"]],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: numbers', () => {
  it.each<Case>([
    ['total_TVL > -1.5', `${TVL} > ${DOUBLE}`, [-1.5]],
    ['total_TVL > +1.5', `${TVL} > ${DOUBLE}`, [1.5]],
    ['total_TVL > .5', `${TVL} > ${DOUBLE}`, [0.5]],
    ['total_TVL > 5.', `${TVL} > ${DOUBLE}`, [5]],
    ['total_TVL > 1e3', `${TVL} > ${DOUBLE}`, [1000]],
    ['total_TVL > 2.5E-3', `${TVL} > ${DOUBLE}`, [0.0025]],
    ['total_TVL > -1e+2', `${TVL} > ${DOUBLE}`, [-100]],
    ['total_TVL < 1e300', `${TVL} < ${DOUBLE}`, ['1e+300']],
    ['total_TVL < 1e999', `${TVL} < ${DOUBLE}`, ['Infinity']],
    ["total_TVL = 'NaN'", `${TVL} = ${DOUBLE}`, ['NaN']],
    ["total_TVL = '-Infinity'", `${TVL} = ${DOUBLE}`, ['-Infinity']],
    ["total_TVL = ' 2.5 '", `${TVL} = ${DOUBLE}`, [2.5]],
    ["num_operators = '5'", `${N} = ${BIGINT}`, [5]],
    ['num_operators = -5', `${N} = ${BIGINT}`, [-5]],
    ['num_operators = 5e2', `${N} = ${BIGINT}`, [500]],
    ['num_operators = 5.000', `${N} = ${BIGINT}`, [5]],
    ['num_operators = 9007199254740993', `${N} = ${BIGINT}`, ['9007199254740993']],
    ['num_operators = -9223372036854775808', `${N} = ${BIGINT}`, ['-9223372036854775808']],
    ["num_operators = '9223372036854775807'", `${N} = ${BIGINT}`, ['9223372036854775807']],
    [
      'big = 170141183460469231731687303715884105727',
      '"big" = CAST(? AS HUGEINT)',
      ['170141183460469231731687303715884105727'],
    ],
    [
      'wide > 170141183460469231731687303715884105728',
      '"wide" > CAST(? AS UHUGEINT)',
      ['170141183460469231731687303715884105728'],
    ],
    ['amount = 1e70', '"amount" = CAST(? AS BIGNUM)', [`1${'0'.repeat(70)}`]],
    ['amount < -5', '"amount" < CAST(? AS BIGNUM)', [-5]],
    ['share = 1.5', '"share" = CAST(? AS DECIMAL(18,4))', ['1.5000']],
    ["share = '-0.0001'", '"share" = CAST(? AS DECIMAL(18,4))', ['-0.0001']],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: numbers an exact column cannot hold are decided exactly', () => {
  const FALSE = (c: string) => `(CASE WHEN ${c} IS NULL THEN NULL ELSE FALSE END)`;
  const TRUE = (c: string) => `(CASE WHEN ${c} IS NULL THEN NULL ELSE TRUE END)`;
  it.each<Case>([
    ['num_operators > 1.5', `${N} > ${BIGINT}`, [1]],
    ['num_operators >= 1.5', `${N} >= ${BIGINT}`, [2]],
    ['num_operators < 1.5', `${N} < ${BIGINT}`, [2]],
    ['num_operators <= 1.5', `${N} <= ${BIGINT}`, [1]],
    ['num_operators > -1.5', `${N} > ${BIGINT}`, [-2]],
    ['num_operators = 1.5', FALSE(N), []],
    ['num_operators <> 1.5', TRUE(N), []],
    ['num_operators < 1e30', TRUE(N), []],
    ['num_operators > 1e30', FALSE(N), []],
    ['num_operators >= -1e30', TRUE(N), []],
    ['small > 200', FALSE('"small"'), []],
    ['small < 127', `"small" < CAST(? AS TINYINT)`, [127]],
    ['small <= 127', TRUE('"small"'), []],
    ['num_operators IN (1, 1.5, 2)', `${N} IN (${BIGINT}, ${BIGINT})`, [1, 2]],
    ['num_operators IN (1.5)', FALSE(N), []],
    ['num_operators NOT IN (1.5, 2.5)', TRUE(N), []],
    ['num_operators BETWEEN 1.5 AND 3.5', `${N} BETWEEN ${BIGINT} AND ${BIGINT}`, [2, 3]],
    ['num_operators BETWEEN 3 AND 1', FALSE(N), []],
    ['num_operators NOT BETWEEN 1.2 AND 1.8', TRUE(N), []],
    [
      'small BETWEEN -1000 AND 1000',
      `"small" BETWEEN CAST(? AS TINYINT) AND CAST(? AS TINYINT)`,
      [-128, 127],
    ],
    ['share > 1.00005', '"share" > CAST(? AS DECIMAL(18,4))', ['1.0000']],
    ['share >= 1.00005', '"share" >= CAST(? AS DECIMAL(18,4))', ['1.0001']],
    ['share = 1.00005', FALSE('"share"'), []],
    ['share < 1e20', TRUE('"share"'), []],
    ['amount > 1.5', '"amount" > CAST(? AS BIGNUM)', [1]],
    ['amount = 0.5', FALSE('"amount"'), []],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: other literals and column types', () => {
  it.each<Case>([
    ['active = TRUE', '"active" = ?', [true]],
    ["active = 'false'", '"active" = ?', [false]],
    ['active IN (TRUE, FALSE)', '"active" IN (?, ?)', [true, false]],
    [
      'avs_contract_address = 0x870679E138bcdf293b7ff14dd44b70fc97e12fc0',
      '"avs_contract_address" = ?',
      ['0x870679e138bcdf293b7ff14dd44b70fc97e12fc0'],
    ],
    ['avs_contract_address IN (0xAB, 0xcd)', '"avs_contract_address" IN (?, ?)', ['0xab', '0xcd']],
    ['payload = 0xABcd', '"payload" = from_hex(?)', ['abcd']],
    ['payload = 0x', '"payload" = from_hex(?)', ['']],
    ["payload < '0x00FF'", '"payload" < from_hex(?)', ['00ff']],
    ['avs_name = 007', `${NAME} = ?`, ['007']],
    ['avs_name = -1.50', `${NAME} = ?`, ['-1.50']],
    ["launched >= '2024-01-01'", '"launched" >= CAST(? AS DATE)', ['2024-01-01']],
    [
      "launched BETWEEN '2024-01-01' AND '2024-12-31'",
      '"launched" BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)',
      ['2024-01-01', '2024-12-31'],
    ],
    ["updated_at > '2024-01-31'", '"updated_at" > CAST(? AS TIMESTAMP)', ['2024-01-31 00:00:00.000000']],
    [
      "updated_at = '2024-01-31T12:00:00Z'",
      '"updated_at" = CAST(? AS TIMESTAMP)',
      ['2024-01-31 12:00:00.000000'],
    ],
    [
      "updated_at < '2024-01-31 12:00:00.123 UTC'",
      '"updated_at" < CAST(? AS TIMESTAMP)',
      ['2024-01-31 12:00:00.123000'],
    ],
    [
      "updated_at < '2024-01-31 12:00'",
      '"updated_at" < CAST(? AS TIMESTAMP)',
      ['2024-01-31 12:00:00.000000'],
    ],
    [
      "updated_tz = '2024-01-31 12:00:00'",
      '"updated_tz" = CAST(? AS TIMESTAMPTZ)',
      ['2024-01-31 12:00:00.000000+00'],
    ],
    [
      "updated_ns = '2024-01-31 12:00:00.123456789'",
      '"updated_ns" = CAST(? AS TIMESTAMP_NS)',
      ['2024-01-31 12:00:00.123456789'],
    ],
    ["at_time = '12:00:00'", 'CAST("at_time" AS VARCHAR) = ?', ['12:00:00']],
    ["at_time LIKE '12:%'", 'CAST("at_time" AS VARCHAR) LIKE ?', ['12:%']],
  ])('%s', (...c) => check(c));
});

describe('compileFilters: identifiers', () => {
  it.each<Case>([
    ['total_tvl > 1', `${TVL} > ${DOUBLE}`, [1]],
    ['TOTAL_TVL > 1', `${TVL} > ${DOUBLE}`, [1]],
    ['"total_tvl" > 1', `${TVL} > ${DOUBLE}`, [1]],
    ['"total_TVL" > 1', `${TVL} > ${DOUBLE}`, [1]],
    ['stETH_tvl > 1', `"stETH_TVL" > ${DOUBLE}`, [1]],
    ['"special, ""col""" = \'x\'', '"special, ""col""" = ?', ['x']],
    ['"special, \\"col\\"" = \'x\'', '"special, ""col""" = ?', ['x']],
    ['"SPECIAL, ""COL""" = \'x\'', '"special, ""col""" = ?', ['x']],
    ['"in" = \'x\'', '"in" = ?', ['x']],
    ["\tavs_name\n=\r\n'x'  ", `${NAME} = ?`, ['x']],
  ])('%s', (...c) => check(c));
});
