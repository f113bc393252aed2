/**
 * The tokens of `filters` and `sort_by`, and the quoted names of `columns`, read where they stand
 * in the client's text. Anything outside the language is an error here.
 */
import { echo, type SourceText } from './errors.js';
import { MAX_TEXT_BYTES } from './limits.js';

/** `start` and `end` are UTF-16 indices into the client's text. */
export type Token = { start: number; end: number } & (
  | { kind: 'word'; text: string }
  | { kind: 'quoted-name'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'hex'; digits: string }
  | { kind: 'symbol'; text: string }
);
type Quoted = Extract<Token, { kind: 'quoted-name' }>;

const TOO_LONG = `text longer than ${MAX_TEXT_BYTES} bytes`;

/**
 * Refuses text that no later stage should see: more than MAX_TEXT_BYTES of UTF-8, or a lone
 * surrogate, which cannot be encoded as UTF-8 and would reach DuckDB altered.
 */
export function checkText(source: SourceText): void {
  let [i, bytes] = [0, 0];
  for (const c of source.text) {
    const code = c.codePointAt(0) as number;
    const lone = code >= 0xd800 && code <= 0xdfff;
    if (lone) throw source.error(i, 'invalid character (an unpaired UTF-16 surrogate)');
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes > MAX_TEXT_BYTES) throw source.error(i, TOO_LONG, 'shorten the expression');
    i += c.length;
  }
}

/**
 * A SQL string (`''` is a quote inside it, a backslash just a backslash), hex before numbers so
 * that `0x1` is hex, a name, or a symbol; `==` is a slip, answered below, not `=` twice.
 */
const TOKEN =
  /('(?:[^']|'')*'(?!'))|(0[xX][0-9a-fA-F]*)|([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|([\p{L}_][\p{L}\p{M}\p{N}_]*)|(!=|<>|<=|>=|(?!==)[(),.=<>])/uy;
const NAME_PART = /[\p{L}\p{M}\p{N}_]/uy;
/** A malformed literal is quoted whole in its message: this run of characters. */
const WORD_LIKE = /[\p{L}\p{M}\p{N}_.+-]*/uy;
const SPACES = /\s*/uy;
/** The body of a quoted name up to its closing quote: `""` and `\"` are quotes inside it. */
const QUOTED_BODY = /(?:""|\\"|[^"])*/y;

/** Common slips, answered with what to write instead. */
const MISTAKES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    '==': "write '=' to compare",
    '&&': 'write AND',
    '||': 'write OR',
    '!': 'write NOT, or != to compare',
    '`': 'double-quote column names: "my column"',
    ';': 'semicolons are not part of the language',
    '[ ]': 'IN lists are written in parentheses: col IN (1, 2)',
    '\u2018 \u2019 \u201a \u201b \u2032': "quote strings with ' (U+0027)",
    '\u201c \u201d \u201e \u201f \u2033': 'quote column names with " (U+0022)',
    '+ - * / %': 'arithmetic is not supported',
  }).flatMap(([slips, hint]) => slips.split(' ').map((slip): [string, string] => [slip, hint])),
);

/** The match of a sticky pattern at `i`, if any. */
function matchAt(pattern: RegExp, text: string, i: number): string | undefined {
  pattern.lastIndex = i;
  return pattern.exec(text)?.[0];
}

/** The index of the first character at or after `i` that is not a space. */
const skipSpaces = (text: string, i: number): number => i + (matchAt(SPACES, text, i)?.length ?? 0);

/** Every token of `filters` or `sort_by`; `nameFollower` and `eager` as in `readQuotedName`. */
export function tokenize(source: SourceText, nameFollower: RegExp, eager = false): Token[] {
  const { text } = source;
  const tokens: Token[] = [];
  for (let i = skipSpaces(text, 0); i < text.length; i = skipSpaces(text, (tokens.at(-1) as Token).end)) {
    tokens.push(text[i] === '"' ? readQuotedName(source, i, nameFollower, eager) : readToken(source, i));
  }
  return tokens;
}

/** The token at `i`, which is neither a space nor a quoted name. */
function readToken(source: SourceText, i: number): Token {
  const { text } = source;
  TOKEN.lastIndex = i;
  const [raw = '', string, hex, number, word] = TOKEN.exec(text) ?? [];
  const at = { start: i, end: i + raw.length };
  const hint = "close it with ', and write '' for a quote inside it";
  if (text[i] === "'" && string === undefined) throw source.error(i, 'unterminated string', hint);
  // A number or hex literal that runs on into a name or another dot is malformed as a whole.
  const runsOn = matchAt(NAME_PART, text, at.end) ?? (number !== undefined && text[at.end] === '.');
  if ((hex ?? number) !== undefined && runsOn) {
    const whole = echo(matchAt(WORD_LIKE, text, i) ?? '');
    if (number !== undefined) throw source.error(i, `invalid number ${whole}`);
    throw source.error(i, `invalid hex literal ${whole}`, 'write 0x followed by hex digits');
  }
  const value = string?.slice(1, -1).replaceAll("''", "'");
  if (value !== undefined) return { kind: 'string', value, ...at };
  if (hex !== undefined) return { kind: 'hex', digits: hex.slice(2), ...at };
  if (number !== undefined) return { kind: 'number', text: number, ...at };
  if (word !== undefined) return { kind: 'word', text: word, ...at };
  if (raw !== '') return { kind: 'symbol', text: raw, ...at };
  const [pair, c] = [text.slice(i, i + 2), String.fromCodePoint(text.codePointAt(i) ?? 0)];
  if (MISTAKES.has(pair)) throw source.error(i, `unexpected ${echo(pair)}`, MISTAKES.get(pair));
  throw source.error(i, `unexpected character ${echo(c)}`, MISTAKES.get(c));
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
export function readQuotedName(source: SourceText, start: number, follower: RegExp, eager = false): Quoted {
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
  if (name === '') throw source.error(start, 'empty column name ""');
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
    if (!source.text.includes('\\"')) throw error;
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
