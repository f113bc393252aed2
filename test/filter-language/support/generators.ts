/**
 * fast-check arbitraries for the property tests: random valid filters over the fixture, each
 * carrying its own meaning (an `EvalFilter`) and printed in randomly varied but equivalent
 * spellings; and token soup, near-miss and arbitrary strings for the fuzzing property.
 */
import fc from 'fast-check';
import type { EvalFilter, EvalOperator, EvalValue } from './evaluate.js';
import { FIXTURE_COLUMNS, type FixtureColumn, unitsText } from './fixture.js';

/** A literal: how it is written, and what it means for its column. */
export interface Literal {
  text: string;
  value: EvalValue;
}

/** `style` drives the printer's free choices (case, quoting, spacing, parentheses). */
export type GenFilter = { style: number } & (
  | { kind: 'and' | 'or'; operands: GenFilter[] }
  | { kind: 'not'; operand: GenFilter }
  | { kind: 'compare'; column: FixtureColumn; operator: EvalOperator; literal: Literal }
  | { kind: 'in'; column: FixtureColumn; negated: boolean; literals: Literal[] }
  | { kind: 'like'; column: FixtureColumn; negated: boolean; caseInsensitive: boolean; pattern: string }
  | { kind: 'between'; column: FixtureColumn; negated: boolean; low: Literal; high: Literal }
  | { kind: 'is-null'; column: FixtureColumn; negated: boolean }
);

const quoteString = (text: string) => `'${text.replaceAll("'", "''")}'`;

// ---------------------------------------------------------------- literals per column kind

function exactLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  const scale = column.scale ?? 0;
  const pool = column.name === 'id' ? [0n, 1n, 17n, 47n] : (column.pool as bigint[]);
  const bounds = [column.min, column.max].filter((b): b is bigint => b !== undefined);
  // Values as (numerator, power of ten): pool values, their neighbours and halves, the type's
  // limits and just past them, huge numbers, and random ones.
  const rational: fc.Arbitrary<{ num: bigint; exp: number }> = fc.oneof(
    fc.constantFrom(...pool).map((units) => ({ num: units, exp: scale })),
    fc
      .tuple(fc.constantFrom(...pool, ...bounds), fc.constantFrom(-1n, 1n))
      .map(([units, step]) => ({ num: units + step, exp: scale })),
    fc
      .tuple(fc.constantFrom(...pool, ...bounds), fc.constantFrom(-5n, 5n))
      .map(([units, half]) => ({ num: units * 10n + half, exp: scale + 1 })),
    fc.constantFrom(10n ** 40n, -(10n ** 40n), 2n ** 300n).map((num) => ({ num, exp: 0 })),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((num) => ({ num, exp: 0 })),
    fc.tuple(fc.integer({ min: -99999, max: 99999 }), fc.integer({ min: 0, max: 6 })).map(([n, exp]) => ({
      num: BigInt(n),
      exp,
    })),
  );
  return fc.tuple(rational, fc.nat(7)).map(([{ num, exp }, form]) => {
    const den = 10n ** BigInt(exp);
    const canonical = unitsText(num, exp);
    const texts = [
      canonical,
      `${num}e-${exp}`,
      unitsText(num * 1000n, exp + 3),
      num >= 0n ? `+${canonical}` : canonical,
      quoteString(canonical),
      quoteString(` ${canonical} `),
      exp === 0 && num !== 0n && num % 100n === 0n ? `${num / 100n}E2` : canonical,
      `${unitsText(num, exp)}e0`,
    ];
    return { text: texts[form] as string, value: { kind: 'exact', value: { num, den } } };
  });
}

function doubleLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  const pool = column.pool as number[];
  const value = fc.oneof(
    fc.constantFrom(...pool),
    fc.double(),
    fc.constantFrom(2 ** 53, 2 ** 53 + 2, 1e-320, 5e-324),
  );
  return fc.tuple(value, fc.nat(4)).map(([v, form]) => {
    if (Number.isNaN(v)) {
      return { text: ["'NaN'", "'nan'", "' NaN '"][form % 3] as string, value: { kind: 'double', value: v } };
    }
    if (!Number.isFinite(v)) {
      const words =
        v > 0 ? ["'Infinity'", "'inf'", "'+Infinity'", '1e999'] : ["'-Infinity'", "'-inf'", '-1e999'];
      return { text: words[form % words.length] as string, value: { kind: 'double', value: v } };
    }
    const texts = [String(v), v.toExponential(), v.toPrecision(17), quoteString(String(v)), String(v)];
    return { text: texts[form] as string, value: { kind: 'double', value: v } };
  });
}

const TEXT_ALPHABET = ['a', 'A', 'b', 'é', 'É', '%', '_', "'", '"', '\\', ' ', 'x', '0', ';', '-', '\u0000'];

const randomText = (alphabet: readonly string[]) =>
  fc.array(fc.constantFrom(...alphabet), { maxLength: 4 }).map((chars) => chars.join(''));

const hexDigits = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), maxLength });

function textLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  const pool = column.pool as string[];
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .oneof(fc.constantFrom(...pool), randomText(TEXT_ALPHABET))
        .map((value): Literal => ({ text: quoteString(value), value: { kind: 'text', value } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('5', '007', '-1.50', '1e3', '0')
        .map((text): Literal => ({ text, value: { kind: 'text', value: text } })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(hexDigits(6), fc.boolean()).map(
        ([digits, upper]): Literal => ({
          text: `0x${upper ? digits.toUpperCase() : digits}`,
          value: { kind: 'text', value: `0x${digits}` },
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('0x870679E138BCDF293B7FF14DD44B70FC97E12FC0', '0xABC', '0x12')
        .map((text): Literal => ({ text, value: { kind: 'text', value: text.toLowerCase() } })),
    },
  );
}

function booleanLiteral(): fc.Arbitrary<Literal> {
  return fc.tuple(fc.boolean(), fc.nat(4)).map(([b, form]) => {
    const word = b ? 'true' : 'false';
    const texts = [
      word.toUpperCase(),
      word,
      `${word[0]?.toUpperCase()}${word.slice(1)}`,
      quoteString(word),
      quoteString(word.toUpperCase()),
    ];
    return { text: texts[form] as string, value: { kind: 'boolean', value: b } };
  });
}

const two = (n: number) => String(n).padStart(2, '0');

function dateValue(): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.integer({ min: 1, max: 9999 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 28 }),
    )
    .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${two(m)}-${two(d)}`);
}

function dateLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  return fc
    .tuple(fc.oneof(fc.constantFrom(...(column.pool as string[])), dateValue()), fc.boolean())
    .map(([value, padded]) => ({
      text: quoteString(padded ? ` ${value} ` : value),
      value: { kind: 'date', value },
    }));
}

function timestampLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  const random = fc
    .tuple(
      dateValue(),
      fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 59 }),
      fc.integer({ min: 0, max: 59 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 999999 })),
    )
    .map(
      ([date, h, m, s, micros]) => `${date} ${two(h)}:${two(m)}:${two(s)}.${String(micros).padStart(6, '0')}`,
    );
  return fc
    .tuple(fc.oneof(fc.constantFrom(...(column.pool as string[])), random), fc.nat(5))
    .map(([value, form]) => {
      const [date = '', time = ''] = value.split(' ');
      const [clock = '', fraction = ''] = time.split('.');
      const trimmed = fraction.replace(/0+$/, '');
      const short = trimmed === '' ? clock : `${clock}.${trimmed}`;
      const texts = [
        value,
        `${date}T${short}`,
        `${date} ${short} UTC`,
        `${date}T${short}Z`,
        clock === '00:00:00' && trimmed === '' ? date : value,
        clock.endsWith(':00') && trimmed === '' ? `${date} ${clock.slice(0, 5)}` : value,
      ];
      return { text: quoteString(texts[form] as string), value: { kind: 'timestamp', value } };
    });
}

function bytesLiteral(column: FixtureColumn): fc.Arbitrary<Literal> {
  const even = fc
    .array(hexDigits(2), { maxLength: 3 })
    .map((pairs) => pairs.join('').slice(0, pairs.join('').length & ~1));
  return fc
    .tuple(fc.oneof(fc.constantFrom(...(column.pool as string[])), even), fc.nat(2))
    .map(([hex, form]) => {
      const texts = [`0x${hex}`, `0X${hex.toUpperCase()}`, quoteString(`0x${hex.toUpperCase()}`)];
      return { text: texts[form] as string, value: { kind: 'bytes', value: hex.toLowerCase() } };
    });
}

export function literalFor(column: FixtureColumn): fc.Arbitrary<Literal> {
  switch (column.kind) {
    case 'exact':
      return exactLiteral(column);
    case 'double':
      return doubleLiteral(column);
    case 'text':
      return textLiteral(column);
    case 'boolean':
      return booleanLiteral();
    case 'date':
      return dateLiteral(column);
    case 'timestamp':
      return timestampLiteral(column);
    case 'bytes':
      return bytesLiteral(column);
  }
}

// ---------------------------------------------------------------- filters

const OPERATORS: readonly EvalOperator[] = ['=', '<>', '<', '<=', '>', '>='];
const TEXT_COLUMNS = FIXTURE_COLUMNS.filter((c) => c.kind === 'text');
const LIKE_ALPHABET = TEXT_ALPHABET.filter((c) => c !== '\u0000').concat(['%', '_', 'a', 'b']);

function predicate(column: FixtureColumn): fc.Arbitrary<GenFilter> {
  const literal = literalFor(column);
  const style = fc.nat();
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('compare' as const),
        column: fc.constant(column),
        operator: fc.constantFrom(...OPERATORS),
        literal,
        style,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('in' as const),
        column: fc.constant(column),
        negated: fc.boolean(),
        literals: fc.array(literal, { minLength: 1, maxLength: 4 }),
        style,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('between' as const),
        column: fc.constant(column),
        negated: fc.boolean(),
        low: literal,
        high: literal,
        style,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('is-null' as const),
        column: fc.constant(column),
        negated: fc.boolean(),
        style,
      }),
    },
  );
}

function likePredicate(): fc.Arbitrary<GenFilter> {
  const pattern = fc.oneof(
    randomText(LIKE_ALPHABET),
    fc
      .tuple(
        fc.constantFrom(...TEXT_COLUMNS.flatMap((c) => c.pool as string[])),
        fc.nat(),
        fc.constantFrom('%', '_'),
      )
      .map(([value, at, wildcard]) => {
        const chars = [...value.replaceAll('\u0000', '')];
        if (chars.length > 0) {
          chars[at % chars.length] = wildcard;
        }
        return chars.join('');
      }),
  );
  return fc.record({
    kind: fc.constant('like' as const),
    column: fc.constantFrom(...TEXT_COLUMNS),
    negated: fc.boolean(),
    caseInsensitive: fc.boolean(),
    pattern,
    style: fc.nat(),
  });
}

const anyPredicate: fc.Arbitrary<GenFilter> = fc.oneof(
  { weight: FIXTURE_COLUMNS.length, arbitrary: fc.constantFrom(...FIXTURE_COLUMNS).chain(predicate) },
  { weight: 3, arbitrary: likePredicate() },
);

export const genFilter: fc.Arbitrary<GenFilter> = fc.letrec<{ filter: GenFilter }>((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true, maxDepth: 4 },
    { weight: 3, arbitrary: anyPredicate },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constantFrom('and' as const, 'or' as const),
        operands: fc.array(tie('filter'), { minLength: 2, maxLength: 3 }),
        style: fc.nat(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('not' as const), operand: tie('filter'), style: fc.nat() }),
    },
  ),
})).filter;

/** The meaning of a generated filter, independent of how it is printed and parsed. */
export function meaning(filter: GenFilter): EvalFilter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { kind: filter.kind, operands: filter.operands.map(meaning) };
    case 'not':
      return { kind: 'not', operand: meaning(filter.operand) };
    case 'compare':
      return {
        kind: 'compare',
        column: filter.column.name,
        operator: filter.operator,
        value: filter.literal.value,
      };
    case 'in':
      return {
        kind: 'in',
        column: filter.column.name,
        negated: filter.negated,
        values: filter.literals.map((l) => l.value),
      };
    case 'like':
      return {
        kind: 'like',
        column: filter.column.name,
        negated: filter.negated,
        caseInsensitive: filter.caseInsensitive,
        pattern: filter.pattern,
      };
    case 'between':
      return {
        kind: 'between',
        column: filter.column.name,
        negated: filter.negated,
        low: filter.low.value,
        high: filter.high.value,
      };
    case 'is-null':
      return { kind: 'is-null', column: filter.column.name, negated: filter.negated };
  }
}

// ---------------------------------------------------------------- printing

const OR = 1;
const AND = 2;
const NOT = 3;
const PREDICATE = 4;

function bit(style: number, n: number): boolean {
  return ((style >>> n) & 1) === 1;
}

function keyword(word: string, style: number): string {
  switch (style % 3) {
    case 0:
      return word.toUpperCase();
    case 1:
      return word.toLowerCase();
    default:
      return [...word].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');
  }
}

const BARE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set([
  'and',
  'or',
  'not',
  'in',
  'like',
  'ilike',
  'is',
  'null',
  'true',
  'false',
  'between',
]);

function columnText(name: string, style: number): string {
  const cased = bit(style, 4) ? name.toUpperCase() : name;
  if (BARE.test(name) && !RESERVED.has(name.toLowerCase()) && !bit(style, 5)) {
    return cased;
  }
  return bit(style, 6) ? `"${cased.replaceAll('"', '\\"')}"` : `"${cased.replaceAll('"', '""')}"`;
}

function space(style: number): string {
  return [' ', '  ', '\n', '\t '][(style >>> 7) % 4] as string;
}

function operatorText(operator: EvalOperator, style: number): string {
  const text = operator === '<>' && bit(style, 9) ? '!=' : operator;
  return bit(style, 10) ? text : ` ${text} `;
}

function precedence(filter: GenFilter): number {
  return filter.kind === 'or' ? OR : filter.kind === 'and' ? AND : filter.kind === 'not' ? NOT : PREDICATE;
}

/** Writes a filter with only the parentheses precedence needs, plus some the style adds. */
export function print(filter: GenFilter, parent = 0): string {
  const s = filter.style;
  const k = (word: string) => keyword(word, s);
  const sp = space(s);
  const not = (negated: boolean) => (negated ? `${k('not')}${sp}` : '');
  let text: string;
  switch (filter.kind) {
    case 'and':
    case 'or':
      text = filter.operands
        .map((operand) => print(operand, precedence(filter)))
        .join(`${sp}${k(filter.kind)}${sp}`);
      break;
    case 'not':
      text = `${k('not')}${sp}${print(filter.operand, NOT)}`;
      break;
    case 'compare':
      text = `${columnText(filter.column.name, s)}${operatorText(filter.operator, s)}${filter.literal.text}`;
      break;
    case 'in':
      text = `${columnText(filter.column.name, s)}${sp}${not(filter.negated)}${k('in')}${sp}(${filter.literals.map((l) => l.text).join(bit(s, 11) ? ',' : ', ')})`;
      break;
    case 'like':
      text = `${columnText(filter.column.name, s)}${sp}${not(filter.negated)}${k(filter.caseInsensitive ? 'ilike' : 'like')}${sp}${quoteString(filter.pattern)}`;
      break;
    case 'between':
      text = `${columnText(filter.column.name, s)}${sp}${not(filter.negated)}${k('between')}${sp}${filter.low.text}${sp}${k('and')}${sp}${filter.high.text}`;
      break;
    case 'is-null':
      text = `${columnText(filter.column.name, s)}${sp}${k('is')}${sp}${not(filter.negated)}${k('null')}`;
      break;
  }
  return precedence(filter) < parent || bit(s, 12) ? `(${text})` : text;
}

// ---------------------------------------------------------------- arbitrary text

const SOUP_TOKENS: readonly string[] = [
  ...FIXTURE_COLUMNS.map((c) => columnText(c.name, 0)),
  '"Odd \\"name\\", x"',
  'S',
  'I',
  'nope',
  '"nope"',
  ...['and', 'or', 'not', 'in', 'like', 'ilike', 'is', 'null', 'true', 'false', 'between'].flatMap((w) => [
    w,
    w.toUpperCase(),
  ]),
  ...['=', '!=', '<>', '<', '<=', '>', '>=', '==', '!', '(', ')', '(', ')', ',', '.', ';', '[', ']'],
  ...['0', '1', '-1', '1.5', '1e3', '9007199254740993', '1e40', '-0.5', '.5', '007', '127', '-128', '1e999'],
  ...["'a'", "'A'", "'it''s'", "'%'", "'a%'", "'_b'", "'x\\y'", "''", "'5'", "'NaN'", "'true'", "'0xab'"],
  ...["'2024-01-01'", "'2024-01-01 12:30:00.5'", "'12:00:00'", "'a\u0000b'"],
  ...['0xab', '0xABCD', '0x', '0x870679e138bcdf293b7ff14dd44b70fc97e12fc0', '0xabc'],
  ...[
    '--',
    '/*',
    '*/',
    'UNION',
    'SELECT',
    '$1',
    '?',
    '\u2018',
    '\u2019',
    '\u0000',
    '\\',
    '"',
    "'",
    'lower(',
    'x.y',
    '+',
    '&&',
  ],
];

const SEPARATORS = [' ', ' ', ' ', '', '\n', '\t', '  '];

/** Sequences of the language's tokens (and some junk), valid or not. */
export const tokenSoup: fc.Arbitrary<string> = fc
  .array(fc.tuple(fc.constantFrom(...SOUP_TOKENS), fc.constantFrom(...SEPARATORS)), {
    minLength: 1,
    maxLength: 14,
  })
  .map((parts) => parts.map(([token, separator]) => token + separator).join(''));

/** A valid filter with one random edit: most of the text right, one thing wrong (or not). */
export const nearMiss: fc.Arbitrary<string> = fc
  .tuple(genFilter, fc.nat(), fc.nat(6), fc.constantFrom(...SOUP_TOKENS))
  .map(([filter, at, length, token]) => {
    const text = print(filter);
    const i = at % (text.length + 1);
    return at % 2 === 0
      ? text.slice(0, i) + text.slice(i + length)
      : `${text.slice(0, i)} ${token} ${text.slice(i)}`;
  });

export const anyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: tokenSoup },
  { weight: 5, arbitrary: nearMiss },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  },
);
