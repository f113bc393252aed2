import { type Statement, type Token, tokens } from './sql-text.js';

/**
 * The commands a client sends about its session rather than about data: transactions,
 * settings, cursors. PostgreSQL's grammar for each is small; these are recognised from their
 * words (sql-text.ts) and answered by the session without reaching DuckDB. Everything else
 * is a query for the sandbox, which refuses what is not one.
 */

export type SessionCommand =
  | { kind: 'begin'; tag: 'BEGIN' | 'START TRANSACTION' }
  | { kind: 'commit' }
  | { kind: 'rollback' }
  | { kind: 'savepoint'; tag: 'SAVEPOINT' | 'RELEASE' | 'ROLLBACK' }
  | { kind: 'set'; name: string; value: string | undefined }
  | { kind: 'ignored-set' }
  | { kind: 'show'; name: string }
  | { kind: 'show-all' }
  | { kind: 'reset-all' }
  | { kind: 'discard-all' }
  | { kind: 'declare'; name: string; query: Statement }
  | { kind: 'fetch'; name: string; count: number; move: boolean }
  | { kind: 'close'; name: string | undefined }
  | { kind: 'deallocate'; name: string | undefined }
  | { kind: 'unsupported'; message: string };

class Words {
  private i = 0;
  constructor(readonly list: Token[]) {}

  peek(offset = 0): Token | undefined {
    return this.list[this.i + offset];
  }

  /** Consumes the next token if it is this word (or symbol). */
  accept(...texts: string[]): boolean {
    const token = this.list[this.i];
    if (token && (token.kind === 'word' || token.kind === 'symbol') && texts.includes(token.text)) {
      this.i++;
      return true;
    }
    return false;
  }

  take(): Token | undefined {
    return this.list[this.i++];
  }

  get done(): boolean {
    return this.i >= this.list.length;
  }

  rest(): Token[] {
    return this.list.slice(this.i);
  }
}

/** A name as PostgreSQL folds it: unquoted words lowercased, quoted ones kept. */
function nameOf(token: Token | undefined): string | undefined {
  return token && (token.kind === 'word' || token.kind === 'quoted') ? token.text : undefined;
}

const TRANSACTION_NOISE = ['transaction', 'work'];

export function sessionCommand(statement: Statement): SessionCommand | undefined {
  const words = new Words(tokens(statement.text));
  const first = words.take();
  if (first?.kind !== 'word') return undefined;
  switch (first.text) {
    case 'begin':
      return { kind: 'begin', tag: 'BEGIN' };
    case 'start':
      return words.accept('transaction') ? { kind: 'begin', tag: 'START TRANSACTION' } : undefined;
    case 'commit':
    case 'end':
      if (words.accept('prepared')) return unsupported('two-phase commit is not supported');
      return { kind: 'commit' };
    case 'rollback':
    case 'abort':
      if (words.accept('prepared')) return unsupported('two-phase commit is not supported');
      words.accept(...TRANSACTION_NOISE);
      return words.accept('to') ? { kind: 'savepoint', tag: 'ROLLBACK' } : { kind: 'rollback' };
    case 'savepoint':
      return { kind: 'savepoint', tag: 'SAVEPOINT' };
    case 'release':
      return { kind: 'savepoint', tag: 'RELEASE' };
    case 'set':
      return setCommand(words);
    case 'show':
      return showCommand(words);
    case 'reset':
      return resetCommand(words);
    case 'discard':
      return words.accept('all') ? { kind: 'discard-all' } : { kind: 'ignored-set' };
    case 'declare':
      return declareCommand(words, statement);
    case 'fetch':
    case 'move':
      return fetchCommand(words, first.text === 'move');
    case 'close': {
      if (words.accept('all')) return { kind: 'close', name: undefined };
      const name = nameOf(words.take());
      return name === undefined ? undefined : { kind: 'close', name };
    }
    case 'deallocate': {
      words.accept('prepare');
      if (words.accept('all')) return { kind: 'deallocate', name: undefined };
      const name = nameOf(words.take());
      return name === undefined ? undefined : { kind: 'deallocate', name };
    }
    case 'copy':
      return unsupported(
        'COPY is not supported: read rows with SELECT (a cursor or a portal row limit for large results)',
      );
    case 'listen':
    case 'unlisten':
    case 'notify':
      return unsupported(`${first.text.toUpperCase()} is not supported: this server sends no notifications`);
    case 'prepare':
    case 'execute':
      return unsupported(
        `SQL-level ${first.text.toUpperCase()} is not supported: use the extended query protocol's prepared statements`,
      );
    default:
      return undefined;
  }
}

const unsupported = (message: string): SessionCommand => ({ kind: 'unsupported', message });

/** The value of SET: words, strings and numbers joined as PostgreSQL flattens a list. */
function settingValue(list: Token[]): string | undefined {
  if (list.length === 0) return undefined;
  const parts: string[] = [];
  let current = '';
  for (const token of list) {
    if (token.kind === 'symbol' && token.text === ',') {
      parts.push(current);
      current = '';
    } else current += token.kind === 'quoted' ? `"${token.text}"` : token.text;
  }
  parts.push(current);
  return parts.join(', ');
}

function setCommand(words: Words): SessionCommand | undefined {
  words.accept('session', 'local');
  if (words.accept('transaction') || words.accept('characteristics')) return { kind: 'ignored-set' };
  if (words.accept('constraints')) return { kind: 'ignored-set' };
  if (words.peek()?.text === 'role' || words.peek()?.text === 'authorization')
    return unsupported(
      'SET ROLE and SET SESSION AUTHORIZATION are not supported: the API key decides who you are',
    );
  if (words.accept('time')) {
    if (!words.accept('zone')) return undefined;
    const value = words.rest();
    if (value.length === 1 && ['local', 'default'].includes(value[0]?.text ?? ''))
      return { kind: 'set', name: 'TimeZone', value: undefined };
    return { kind: 'set', name: 'TimeZone', value: settingValue(value) };
  }
  if (words.accept('names'))
    return { kind: 'set', name: 'client_encoding', value: settingValue(words.rest()) };
  if (words.accept('schema')) return { kind: 'set', name: 'search_path', value: settingValue(words.rest()) };
  const name = dottedName(words);
  if (name === undefined || !(words.accept('to') || words.accept('='))) return undefined;
  const rest = words.rest();
  if (rest.length === 1 && rest[0]?.kind === 'word' && rest[0].text === 'default')
    return { kind: 'set', name, value: undefined };
  const value = settingValue(rest);
  return value === undefined ? undefined : { kind: 'set', name, value };
}

function dottedName(words: Words): string | undefined {
  let name = nameOf(words.take());
  while (name !== undefined && words.accept('.')) {
    const part = nameOf(words.take());
    name = part === undefined ? undefined : `${name}.${part}`;
  }
  return name;
}

function showCommand(words: Words): SessionCommand | undefined {
  if (words.accept('all')) return words.done ? { kind: 'show-all' } : undefined;
  if (words.accept('time')) return words.accept('zone') ? { kind: 'show', name: 'TimeZone' } : undefined;
  if (words.accept('transaction')) {
    return words.accept('isolation') && words.accept('level')
      ? { kind: 'show', name: 'transaction_isolation' }
      : undefined;
  }
  if (words.accept('session')) {
    return words.accept('authorization') ? { kind: 'show', name: 'session_authorization' } : undefined;
  }
  const name = dottedName(words);
  return name !== undefined && words.done ? { kind: 'show', name } : undefined;
}

function resetCommand(words: Words): SessionCommand | undefined {
  if (words.accept('all')) return { kind: 'reset-all' };
  if (words.accept('time'))
    return words.accept('zone') ? { kind: 'set', name: 'TimeZone', value: undefined } : undefined;
  const name = dottedName(words);
  return name === undefined ? undefined : { kind: 'set', name, value: undefined };
}

function declareCommand(words: Words, statement: Statement): SessionCommand | undefined {
  const name = nameOf(words.take());
  if (name === undefined) return undefined;
  while (!words.done && !words.accept('cursor')) {
    const option = words.take();
    if (option?.text === 'binary')
      return unsupported('binary cursors are not supported: declare the cursor without BINARY');
    if (option?.text === 'scroll' && words.list[words.list.indexOf(option) - 1]?.text !== 'no')
      return unsupported('scrollable cursors are not supported: cursors read forward only (NO SCROLL)');
  }
  while (!words.done && !words.accept('for')) words.take();
  const forToken = words.list[words.list.findIndex((t) => t.kind === 'word' && t.text === 'for')];
  if (words.done || !forToken) return undefined;
  return {
    kind: 'declare',
    name,
    query: { text: statement.text.slice(forToken.end), offset: statement.offset + forToken.end },
  };
}

function fetchCommand(words: Words, move: boolean): SessionCommand | undefined {
  let count = 1;
  const direction = words.peek();
  if (direction?.kind === 'number') {
    count = Number(words.take()?.text);
  } else if (words.accept('next')) count = 1;
  else if (words.accept('all')) count = 0;
  else if (words.accept('forward')) {
    if (words.accept('all')) count = 0;
    else if (words.peek()?.kind === 'number') count = Number(words.take()?.text);
  } else if (words.accept('prior', 'first', 'last', 'absolute', 'relative', 'backward')) {
    return unsupported('cursors read forward only: FETCH NEXT, FORWARD n or ALL');
  }
  if (!Number.isSafeInteger(count) || count < 0) return undefined;
  words.accept('from', 'in');
  const name = nameOf(words.take());
  return name !== undefined && words.done ? { kind: 'fetch', name, count, move } : undefined;
}
