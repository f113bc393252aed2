/**
 * The tokens of the language, read from the client's text where they stand. `readToken` reads one
 * at an index: the filter parser's jsep plugin calls it at jsep's index, and `tokenize` calls it
 * for the keyword pass and for `sort_by`. Anything outside the language is an error here.
 */
import { echo, type SourceText } from './errors.js';
import { MAX_TEXT_BYTES } from './limits.js';

export type SymbolText = '(' | ')' | ',' | '.' | '=' | '!=' | '<>' | '<' | '<=' | '>' | '>=';

/** `start` and `end` are UTF-16 indices into the client's text. */
export type Token = { start: number; end: number } & (
  | { kind: 'word'; text: string }
  | { kind: 'quoted-name'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'hex'; digits: string }
  | { kind: 'symbol'; text: SymbolText }
);

/**
 * Refuses text that no later stage should see: more than MAX_TEXT_BYTES of UTF-8, or a
 * lone surrogate, which cannot be encoded as UTF-8 and would reach DuckDB altered.
 */
export function checkText(source: SourceText): void {
  const { text } = source;
  const lone = text.search(/[\uD800-\uDFFF]/u);
  for (let i = 0, bytes = 0; i < (lone === -1 ? text.length : lone); i++) {
    const unit = text.charCodeAt(i);
    // A surrogate pair is one character of four bytes, counted at its second half.
    bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : unit < 0xd800 || unit > 0xdfff ? 3 : unit < 0xdc00 ? 0 : 4;
    if (bytes > MAX_TEXT_BYTES) {
      throw source.error(i, `text longer than ${MAX_TEXT_BYTES} bytes`, 'shorten the expression');
    }
  }
  if (lone !== -1) {
    throw source.error(lone, 'invalid character (an unpaired UTF-16 surrogate)');
  }
}

/** Hex before numbers, so that `0x1` is hex; `==` is a slip, answered below, not `=` twice. */
const TOKEN =
  /(0[xX][0-9a-fA-F]*)|([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|([\p{L}_][\p{L}\p{M}\p{N}_]*)|(!=|<>|<=|>=|(?!==)[(),.=<>])/uy;
const NAME_PART = /[\p{L}\p{M}\p{N}_]/uy;
/** A malformed literal is quoted whole in its message: this run of characters. */
const WORD_LIKE = /[\p{L}\p{M}\p{N}_.+-]*/uy;
const SPACES = /\s*/uy;
/** A SQL string: `''` is a quote inside it, and a backslash just a backslash. */
const STRING = /'(?:[^']|'')*'(?!')/y;
/** The body of a quoted name up to its closing quote: `""` and `\"` are quotes inside it. */
const QUOTED_BODY = /(?:""|\\"|[^"])*/y;

/** Common slips, answered with what to write instead. */
const MISTAKES: ReadonlyMap<string, string> = new Map([
  ['==', "write '=' to compare"],
  ['&&', 'write AND'],
  ['||', 'write OR'],
  ['!', 'write NOT, or != to compare'],
  ['`', 'double-quote column names: "my column"'],
  [';', 'semicolons are not part of the language'],
  ...[...'[]'].map((c): [string, string] => [c, 'IN lists are written in parentheses: col IN (1, 2)']),
  ...[...'\u2018\u2019\u201a\u201b\u2032'].map((c): [string, string] => [c, "quote strings with ' (U+0027)"]),
  ...[...'\u201c\u201d\u201e\u201f\u2033'].map((c): [string, string] => [
    c,
    'quote column names with " (U+0022)',
  ]),
  ...[...'+-*/%'].map((c): [string, string] => [c, 'arithmetic is not supported']),
]);

/** The match of a sticky pattern at `i`, if any. */
function matchAt(pattern: RegExp, text: string, i: number): string | undefined {
  pattern.lastIndex = i;
  return pattern.exec(text)?.[0];
}

/** The index of the first character at or after `i` that is not a space. */
export function skipSpaces(text: string, i: number): number {
  return i + (matchAt(SPACES, text, i)?.length ?? 0);
}

/**
 * The token at `i` (not a space). `nameFollower` and `eager` tell where a quoted name ends
 * (see `readQuotedName`).
 */
export function readToken(source: SourceText, i: number, nameFollower: RegExp, eager = false): Token {
  const { text } = source;
  if (text[i] === '"') {
    return readQuotedName(source, i, nameFollower, eager);
  }
  if (text[i] === "'") {
    const string = matchAt(STRING, text, i);
    if (string === undefined) {
      throw source.error(i, 'unterminated string', "close it with ', and write '' for a quote inside it");
    }
    return {
      kind: 'string',
      value: string.slice(1, -1).replaceAll("''", "'"),
      start: i,
      end: i + string.length,
    };
  }
  TOKEN.lastIndex = i;
  const [raw = '', hex, number, word] = TOKEN.exec(text) ?? [];
  const end = i + raw.length;
  if (
    (hex ?? number) !== undefined &&
    (matchAt(NAME_PART, text, end) !== undefined || (number && text[end] === '.'))
  ) {
    const whole = echo(matchAt(WORD_LIKE, text, i) ?? '');
    throw number === undefined
      ? source.error(i, `invalid hex literal ${whole}`, 'write 0x followed by hex digits')
      : source.error(i, `invalid number ${whole}`);
  }
  if (raw !== '') {
    return hex !== undefined
      ? { kind: 'hex', digits: hex.slice(2), start: i, end }
      : number !== undefined
        ? { kind: 'number', text: number, start: i, end }
        : word !== undefined
          ? { kind: 'word', text: word, start: i, end }
          : { kind: 'symbol', text: raw as SymbolText, start: i, end };
  }
  const pair = text.slice(i, i + 2);
  const c = String.fromCodePoint(text.codePointAt(i) ?? 0);
  throw MISTAKES.has(pair)
    ? source.error(i, `unexpected ${echo(pair)}`, MISTAKES.get(pair))
    : source.error(i, `unexpected character ${echo(c)}`, MISTAKES.get(c));
}

/** Every token of `filters` or `sort_by`. */
export function tokenize(source: SourceText, nameFollower: RegExp, eager = false): Token[] {
  const tokens: Token[] = [];
  for (let i = skipSpaces(source.text, 0); i < source.text.length; ) {
    const token = readToken(source, i, nameFollower, eager);
    tokens.push(token);
    i = skipSpaces(source.text, token.end);
  }
  return tokens;
}

const unescapeName = (body: string): string => body.replace(/""|\\"/g, '"');

/**
 * A double-quoted name at `start`. Inside it `""` is a quote, as in SQL, and so is `\"`, which
 * the official TypeScript client writes, leaving backslashes as they are: a name that ends in a
 * backslash arrives as `"x\"`. So a `\"` is a quote only where that leaves a well-formed name,
 * one after which `follower` (what follows a name in this parameter) matches. The name ends at the
 * first quote that is neither `""` nor `\"` if it is well-formed there (text read before reads as
 * before); otherwise at the last `\"` where it is, the backslash ending the name; or, `eager`
 * (see `readNamesTwice`), at the first.
 */
export function readQuotedName(
  source: SourceText,
  start: number,
  follower: RegExp,
  eager = false,
): Extract<Token, { kind: 'quoted-name' }> {
  const { text } = source;
  const close = start + 1 + (matchAt(QUOTED_BODY, text, start + 1)?.length ?? 0);
  const wellFormed = (after: number) => matchAt(follower, text, after) !== undefined;
  const ends = [...text.slice(start + 1, close).matchAll(/\\"/g)]
    .map((m) => start + 3 + m.index)
    .filter(wellFormed);
  const end = eager ? ends[0] : wellFormed(close + 1) ? undefined : ends.at(-1);
  if (end !== undefined) {
    return { kind: 'quoted-name', name: `${unescapeName(text.slice(start + 1, end - 2))}\\`, start, end };
  }
  if (close >= text.length) {
    const hint = 'close it with ", and write "" or \\" for a quote inside it';
    throw source.error(start, 'unterminated column name', hint);
  }
  const name = unescapeName(text.slice(start + 1, close));
  if (name === '') {
    throw source.error(start, 'empty column name ""');
  }
  return { kind: 'quoted-name', name, start, end: close + 1 };
}

/**
 * Reads a parameter with `read`, and once more with each quoted name ending at its first possible
 * end if that fails and the text holds a `\"`: a name that ends in a backslash may read on into a
 * later name or string whose quote happens to be well-formed too. The first error stands.
 */
export function readNamesTwice<T>(source: SourceText, read: (eager: boolean) => T): T {
  try {
    return read(false);
  } catch (error) {
    if (!source.text.includes('\\"')) {
      throw error;
    }
    try {
      return read(true);
    } catch {
      throw error;
    }
  }
}

/** A token for a message: quoted, unless it is a string literal, which brings its own quotes. */
export function describeToken(source: SourceText, token: Token | undefined): string {
  return token === undefined
    ? 'the end'
    : echo(source.text.slice(token.start, token.end), token.kind === 'string' ? '' : "'");
}
