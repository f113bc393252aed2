/**
 * The lexical layer of the SQL a client sends, as PostgreSQL reads it: where one statement
 * ends and the next begins (a simple query may hold several), and the first words of each,
 * enough to recognise the session commands clients send (session-commands.ts). It decides
 * nothing about what a query may do: whatever is not a session command goes, as its own
 * text, to the sandbox, which parses it with DuckDB's parser.
 */

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol';

export interface Token {
  kind: TokenKind;
  /** A word lowercased; a quoted name or a string's value unquoted; a symbol's characters. */
  text: string;
  start: number;
  end: number;
}

export interface Statement {
  text: string;
  /** Where it starts in the whole query string (for error positions). */
  offset: number;
}

const isWordStart = (c: string) => /[A-Za-z_\u0080-\uffff]/.test(c);
const isWordPart = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);

/** The end of a comment or quoted part that starts at `i`, or -1 when none starts there. */
function skipQuoted(sql: string, i: number): number {
  const c = sql[i];
  const next = sql[i + 1];
  if (c === '-' && next === '-') {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end + 1;
  }
  if (c === '/' && next === '*') {
    let depth = 0;
    for (let j = i; j < sql.length; j++) {
      if (sql[j] === '/' && sql[j + 1] === '*') {
        depth++;
        j++;
      } else if (sql[j] === '*' && sql[j + 1] === '/') {
        depth--;
        j++;
        if (depth === 0) return j + 1;
      }
    }
    return sql.length;
  }
  if (c === "'" || c === '"') {
    const backslashes =
      c === "'" && i > 0 && /[eE]/.test(sql[i - 1] as string) && !isWordPart(sql[i - 2] ?? ' ');
    for (let j = i + 1; j < sql.length; j++) {
      if (backslashes && sql[j] === '\\') j++;
      else if (sql[j] === c) {
        if (sql[j + 1] === c) j++;
        else return j + 1;
      }
    }
    return sql.length;
  }
  if (c === '$') {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 200));
    if (!tag || (i > 0 && isWordPart(sql[i - 1] as string))) return -1;
    const end = sql.indexOf(tag[0], i + tag[0].length);
    return end < 0 ? sql.length : end + tag[0].length;
  }
  return -1;
}

/** The statements of a query string, split at semicolons outside quotes and comments; empty ones dropped. */
export function splitStatements(sql: string): Statement[] {
  const statements: Statement[] = [];
  let start = 0;
  const push = (end: number) => {
    const piece = sql.slice(start, end);
    if (!isBlank(piece)) statements.push({ text: piece, offset: start });
  };
  for (let i = 0; i < sql.length; ) {
    const skipped = skipQuoted(sql, i);
    if (skipped >= 0) {
      i = skipped;
      continue;
    }
    if (sql[i] === ';') {
      push(i);
      start = i + 1;
    }
    i++;
  }
  push(sql.length);
  return statements;
}

/** Whether the text holds nothing but spaces and comments. */
export function isBlank(sql: string): boolean {
  return tokens(sql, 1).length === 0;
}

/** The first `limit` tokens of a statement (comments skipped). */
export function tokens(sql: string, limit = Number.POSITIVE_INFINITY): Token[] {
  const found: Token[] = [];
  let i = 0;
  while (i < sql.length && found.length < limit) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const skipped = skipQuoted(sql, i);
    if (skipped >= 0 && (c === '-' || c === '/')) {
      i = skipped;
      continue;
    }
    if (skipped >= 0) {
      const body = sql.slice(i + 1, skipped - 1);
      const quote = c === '$' ? sql.indexOf('$', i + 1) + 1 - i : 1;
      const text = c === '$' ? sql.slice(i + quote, skipped - quote) : body.replaceAll(c + c, c);
      found.push({ kind: c === '"' ? 'quoted' : 'string', text, start: i, end: skipped });
      i = skipped;
      continue;
    }
    let end = i + 1;
    let kind: TokenKind = 'symbol';
    if (isWordStart(c)) {
      while (end < sql.length && isWordPart(sql[end] as string)) end++;
      // E'…': the word is a string's prefix.
      if (end === i + 1 && /[eE]/.test(c) && sql[end] === "'") {
        const close = skipQuoted(sql, end);
        found.push({ kind: 'string', text: unescapeE(sql.slice(end + 1, close - 1)), start: i, end: close });
        i = close;
        continue;
      }
      kind = 'word';
    } else if (/[0-9.]/.test(c) && /[0-9]/.test(`${c === '.' ? (sql[i + 1] ?? '') : c}`)) {
      while (end < sql.length && /[0-9.eE_]/.test(sql[end] as string)) end++;
      kind = 'number';
    }
    const raw = sql.slice(i, end);
    found.push({ kind, text: kind === 'word' ? raw.toLowerCase() : raw, start: i, end });
    i = end;
  }
  return found;
}

function unescapeE(body: string): string {
  return body.replace(/''|\\(.)/g, (match, escaped: string | undefined) => {
    if (match === "''") return "'";
    return { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' }[escaped as string] ?? (escaped as string);
  });
}
