import { echo, type SourceText } from './errors.js';
import { BARE_NAME_PART, BARE_NAME_START } from './identifiers.js';
import { MAX_TEXT_BYTES } from './limits.js';

export type SymbolText = '(' | ')' | ',' | '.' | '=' | '!=' | '<>' | '<' | '<=' | '>' | '>=';

/** `start` and `end` are UTF-16 indices into the source text. */
export type Token =
  | { kind: 'word'; text: string; start: number; end: number }
  | { kind: 'quoted-name'; name: string; start: number; end: number }
  | { kind: 'string'; value: string; start: number; end: number }
  | { kind: 'number'; text: string; start: number; end: number }
  | { kind: 'hex'; digits: string; start: number; end: number }
  | { kind: 'symbol'; text: SymbolText; start: number; end: number };

/**
 * Refuses text that no later stage should see: more than MAX_TEXT_BYTES of UTF-8, or a
 * lone surrogate, which cannot be encoded as UTF-8 and would reach DuckDB altered.
 */
export function checkText(source: SourceText): void {
  const { text } = source;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) {
        throw source.error(i, 'invalid character (an unpaired UTF-16 surrogate)');
      }
      bytes += 4;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw source.error(i, 'invalid character (an unpaired UTF-16 surrogate)');
    } else {
      bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    }
    if (bytes > MAX_TEXT_BYTES) {
      throw source.error(i, `text longer than ${MAX_TEXT_BYTES} bytes`, 'shorten the expression');
    }
  }
}

const NUMBER = /[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const HEX = /0[xX][0-9a-fA-F]*/y;
const WORD = /[\p{L}_][\p{L}\p{M}\p{N}_]*/uy;
const WHITESPACE = /\s/u;
const DIGIT = /[0-9]/;

const TWO_CHAR_SYMBOLS: ReadonlySet<string> = new Set(['!=', '<>', '<=', '>=']);
const ONE_CHAR_SYMBOLS: ReadonlySet<string> = new Set(['(', ')', ',', '.', '=', '<', '>']);

/** Common slips, answered with what to write instead. */
const MISTAKES: ReadonlyMap<string, string> = new Map([
  ['==', "write '=' to compare"],
  ['&&', 'write AND'],
  ['||', 'write OR'],
  ['!', 'write NOT, or != to compare'],
  ['`', 'double-quote column names: "my column"'],
  [';', 'semicolons are not part of the language'],
  ['[', 'IN lists are written in parentheses: col IN (1, 2)'],
  [']', 'IN lists are written in parentheses: col IN (1, 2)'],
  ['\u2018', "quote strings with ' (U+0027)"],
  ['\u2019', "quote strings with ' (U+0027)"],
  ['\u201a', "quote strings with ' (U+0027)"],
  ['\u201b', "quote strings with ' (U+0027)"],
  ['\u2032', "quote strings with ' (U+0027)"],
  ['\u201c', 'quote column names with " (U+0022)'],
  ['\u201d', 'quote column names with " (U+0022)'],
  ['\u201e', 'quote column names with " (U+0022)'],
  ['\u201f', 'quote column names with " (U+0022)'],
  ['\u2033', 'quote column names with " (U+0022)'],
  ['+', 'arithmetic is not supported'],
  ['-', 'arithmetic is not supported'],
  ['*', 'arithmetic is not supported'],
  ['/', 'arithmetic is not supported'],
  ['%', 'arithmetic is not supported'],
]);

/** The character (a whole code point) at UTF-16 index `i`. */
function charAt(text: string, i: number): string {
  const code = text.codePointAt(i);
  return code === undefined ? '' : String.fromCodePoint(code);
}

function sticky(pattern: RegExp, text: string, i: number): string | undefined {
  pattern.lastIndex = i;
  return pattern.exec(text)?.[0];
}

/** Splits the text of `filters` or `sort_by` into tokens; anything outside the language is an error. */
export function tokenize(source: SourceText): Token[] {
  const { text } = source;
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = charAt(text, i);
    const next = text[i + 1] ?? '';
    if (WHITESPACE.test(c)) {
      i += c.length;
    } else if (c === "'") {
      const { value, end } = readString(source, i);
      tokens.push({ kind: 'string', value, start: i, end });
      i = end;
    } else if (c === '"') {
      const { name, end } = readQuotedName(source, i);
      tokens.push({ kind: 'quoted-name', name, start: i, end });
      i = end;
    } else if (c === '0' && (next === 'x' || next === 'X')) {
      const raw = sticky(HEX, text, i) ?? '';
      const end = i + raw.length;
      if (BARE_NAME_PART.test(charAt(text, end))) {
        throw source.error(
          i,
          `invalid hex literal ${echo(readWordLike(text, i))}`,
          'write 0x followed by hex digits',
        );
      }
      tokens.push({ kind: 'hex', digits: raw.slice(2), start: i, end });
      i = end;
    } else if (startsNumber(text, i)) {
      const raw = sticky(NUMBER, text, i) ?? '';
      const end = i + raw.length;
      const after = charAt(text, end);
      if (BARE_NAME_PART.test(after) || after === '.') {
        throw source.error(i, `invalid number ${echo(readWordLike(text, i))}`);
      }
      tokens.push({ kind: 'number', text: raw, start: i, end });
      i = end;
    } else if (BARE_NAME_START.test(c)) {
      const word = sticky(WORD, text, i) ?? c;
      tokens.push({ kind: 'word', text: word, start: i, end: i + word.length });
      i += word.length;
    } else if (TWO_CHAR_SYMBOLS.has(c + next)) {
      tokens.push({ kind: 'symbol', text: (c + next) as SymbolText, start: i, end: i + 2 });
      i += 2;
    } else if (MISTAKES.has(c + next)) {
      throw source.error(i, `unexpected ${echo(c + next)}`, MISTAKES.get(c + next));
    } else if (ONE_CHAR_SYMBOLS.has(c)) {
      tokens.push({ kind: 'symbol', text: c as SymbolText, start: i, end: i + 1 });
      i += 1;
    } else {
      throw source.error(i, `unexpected character ${echo(c)}`, MISTAKES.get(c));
    }
  }
  return tokens;
}

function startsNumber(text: string, i: number): boolean {
  const c = text[i] ?? '';
  if (DIGIT.test(c)) {
    return true;
  }
  const next = text[i + 1] ?? '';
  if (c === '.') {
    return DIGIT.test(next);
  }
  if (c === '+' || c === '-') {
    return DIGIT.test(next) || (next === '.' && DIGIT.test(text[i + 2] ?? ''));
  }
  return false;
}

/** The run of identifier-like characters at `i`, to quote a malformed literal whole. */
function readWordLike(text: string, i: number): string {
  let end = i;
  while (end < text.length && /[\p{L}\p{M}\p{N}_.+-]/u.test(charAt(text, end))) {
    end += charAt(text, end).length;
  }
  return text.slice(i, end);
}

/** A SQL string literal starting at `start`: `''` is a quote; a backslash is just a backslash. */
function readString(source: SourceText, start: number): { value: string; end: number } {
  const { text } = source;
  let value = '';
  let i = start + 1;
  for (;;) {
    const close = text.indexOf("'", i);
    if (close === -1) {
      throw source.error(start, 'unterminated string', "close it with ', and write '' for a quote inside it");
    }
    value += text.slice(i, close);
    if (text[close + 1] === "'") {
      value += "'";
      i = close + 2;
    } else {
      return { value, end: close + 1 };
    }
  }
}

/**
 * A double-quoted name starting at `start`. Inside it `""` is a quote, as in SQL, and so is
 * `\"`, which the official TypeScript client sends; any other backslash is kept as it is.
 */
export function readQuotedName(source: SourceText, start: number): { name: string; end: number } {
  const { text } = source;
  let name = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '"' && text[i + 1] === '"') {
      name += '"';
      i += 2;
    } else if (c === '\\' && text[i + 1] === '"') {
      name += '"';
      i += 2;
    } else if (c === '"') {
      if (name === '') {
        throw source.error(start, 'empty column name ""');
      }
      return { name, end: i + 1 };
    } else {
      name += c;
      i += 1;
    }
  }
  throw source.error(
    start,
    'unterminated column name',
    'close it with ", and write "" or \\" for a quote inside it',
  );
}

/** How a token looks in the client's text. */
export function tokenSource(source: SourceText, token: Token): string {
  return source.text.slice(token.start, token.end);
}

/** A token for a message: quoted, unless it is a string literal, which brings its own quotes. */
export function describeToken(source: SourceText, token: Token | undefined): string {
  return token === undefined
    ? 'the end'
    : echo(tokenSource(source, token), token.kind === 'string' ? '' : "'");
}
