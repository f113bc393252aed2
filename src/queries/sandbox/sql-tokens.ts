/**
 * The tokens of a SQL text, as DuckDB's scanner (PostgreSQL's, in libpg_query) cuts them, for
 * one purpose only: estimating what parsing the text will cost before DuckDB parses it
 * (parse-cost.ts). Nothing here decides what the SQL means or may do; DuckDB's parser does
 * (DESIGN §10). A text this scanner reads wrongly is at worst refused for its cost or let
 * through to a parse that costs more than estimated, never checked less.
 *
 * What it must get right is where words are not words: string constants (`'…'` with `''`,
 * `E'…'` with backslash escapes, `$tag$…$tag$`), quoted identifiers (`"…"` with `""`) and
 * comments (`-- …` to the end of the line, `/* … *\/` nested), so that an `and` inside any of
 * them is not counted. Measured on DuckDB 1.5.6: block comments nest; `1=1and 1=1` reads `and`
 * as a keyword after the number; `OR$$a$$` is one identifier (`$` continues a word).
 */

export type TokenKind =
  /** A keyword or an unquoted identifier; `text` is lowercased (ASCII only, as DuckDB folds). */
  | 'word'
  /** A quoted identifier, a string constant, a number or a parameter: one operand. */
  | 'operand'
  /** `(`, `[`, `{` */
  | 'open'
  /** `)`, `]`, `}` */
  | 'close'
  | 'comma'
  | 'semicolon'
  /** Any other character (operators, `.`, `:`). */
  | 'other';

export interface Token {
  kind: TokenKind;
  /** For words, lowercased; for other tokens, the first character. */
  text: string;
  /** Index into the SQL text (a JavaScript string index). */
  start: number;
}

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
const isLetter = (code: number) => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
/** PostgreSQL's ident_start: a letter, `_`, or any non-ASCII character. */
const startsWord = (code: number) => isLetter(code) || code === 0x5f || code >= 0x80;
/** ident_cont: those, digits and `$`. */
const continuesWord = (code: number) => startsWord(code) || isDigit(code) || code === 0x24;

const OPEN = new Set(['(', '[', '{']);
const CLOSE = new Set([')', ']', '}']);

/** Every token of `sql`, comments and white space left out. Linear in the text's length. */
export function sqlTokens(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const code = sql.charCodeAt(i);
    const start = i;
    const char = sql[i] as string;
    if (code <= 0x20) {
      i++;
    } else if (char === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (char === '/' && sql[i + 1] === '*') {
      i = blockCommentEnd(sql, i);
    } else if (char === "'") {
      i = quotedEnd(sql, i, "'", false);
      tokens.push({ kind: 'operand', text: char, start });
    } else if (char === '"') {
      i = quotedEnd(sql, i, '"', false);
      tokens.push({ kind: 'operand', text: char, start });
    } else if (char === '$') {
      i = dollarEnd(sql, i);
      tokens.push({ kind: 'operand', text: char, start });
    } else if (isDigit(code) || (char === '.' && isDigit(sql.charCodeAt(i + 1)))) {
      i = numberEnd(sql, i);
      tokens.push({ kind: 'operand', text: char, start });
    } else if (startsWord(code)) {
      while (i < sql.length && continuesWord(sql.charCodeAt(i))) i++;
      const word = sql.slice(start, i).replace(/[A-Z]+/g, (s) => s.toLowerCase());
      // E'…' takes backslash escapes; any other letter before a quote (X'', B'', N'') is a
      // word followed by a plain string, which the next turn reads.
      if (word === 'e' && sql[i] === "'") {
        i = quotedEnd(sql, i, "'", true);
        tokens.push({ kind: 'operand', text: "'", start });
      } else {
        tokens.push({ kind: 'word', text: word, start });
      }
    } else {
      i++;
      const kind: TokenKind = OPEN.has(char)
        ? 'open'
        : CLOSE.has(char)
          ? 'close'
          : char === ','
            ? 'comma'
            : char === ';'
              ? 'semicolon'
              : 'other';
      tokens.push({ kind, text: char, start });
    }
  }
  return tokens;
}

/** After a block comment starting at `i`; comments nest. An unclosed one runs to the end. */
function blockCommentEnd(sql: string, i: number): number {
  let depth = 0;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return i;
}

/** After the quoted text opening at `i` (doubled quotes inside; backslash escapes if `escapes`). */
function quotedEnd(sql: string, i: number, quote: string, escapes: boolean): number {
  for (i++; i < sql.length; i++) {
    const char = sql[i];
    if (escapes && char === '\\') {
      i++;
    } else if (char === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i++;
    }
  }
  return i;
}

/** `$tag$…$tag$` (tag optional) to its end; otherwise a parameter (`$1`, `$name`). */
function dollarEnd(sql: string, i: number): number {
  let j = i + 1;
  if (j < sql.length && startsWord(sql.charCodeAt(j))) {
    while (j < sql.length && continuesWord(sql.charCodeAt(j)) && sql[j] !== '$') j++;
  }
  if (sql[j] === '$') {
    const delimiter = sql.slice(i, j + 1);
    const end = sql.indexOf(delimiter, j + 1);
    return end < 0 ? sql.length : end + delimiter.length;
  }
  // A parameter: `$` and what follows it as a word or digits.
  j = i + 1;
  while (j < sql.length && continuesWord(sql.charCodeAt(j)) && sql[j] !== '$') j++;
  return Math.max(j, i + 1);
}

/** Digits (and `_`), a fraction, an exponent; what follows is another token (`1and`). */
function numberEnd(sql: string, i: number): number {
  const digits = () => {
    while (i < sql.length && (isDigit(sql.charCodeAt(i)) || sql[i] === '_')) i++;
  };
  digits();
  if (sql[i] === '.' && sql[i + 1] !== '.') {
    i++;
    digits();
  }
  if ((sql[i] === 'e' || sql[i] === 'E') && /^[eE][-+]?\d/.test(sql.slice(i, i + 3))) {
    i += sql[i + 1] === '-' || sql[i + 1] === '+' ? 2 : 1;
    digits();
  }
  return i;
}
