/**
 * `sort_by`: `col [ASC|DESC] [NULLS FIRST|NULLS LAST], ...` (DESIGN.md §5). Keywords count
 * only where a keyword can stand, so a column may be called `desc` or `nulls`.
 */
import { echo, SourceText } from './errors.js';
import { displayName, quoteIdentifier, type ResultColumn, resolveColumn } from './identifiers.js';
import { checkText, describeToken, readNamesTwice, type Token, tokenize } from './lexer.js';

/** What follows a name in `sort_by`, so that in `"x\" DESC` the column is `x\` (see `readQuotedName`). */
const FOLLOWS_SORT_NAME =
  /\s*(?:(?:asc|desc)(?![\p{L}\p{M}\p{N}_])\s*)?(?:nulls\s+(?:first|last)(?![\p{L}\p{M}\p{N}_])\s*)?(?:,|$)/iuy;

export interface SortKey {
  column: ResultColumn;
  direction: 'ASC' | 'DESC';
  /** Absent when the client did not say: DuckDB then puts NULLs last. */
  nulls?: 'FIRST' | 'LAST';
}

export function parseSortBy(text: string, columns: readonly ResultColumn[]): SortKey[] {
  const source = new SourceText('sort_by', text);
  checkText(source);
  return readNamesTwice(source, (eager) =>
    sortKeys(source, tokenize(source, FOLLOWS_SORT_NAME, eager), columns),
  );
}

function sortKeys(source: SourceText, tokens: readonly Token[], columns: readonly ResultColumn[]): SortKey[] {
  const keys: SortKey[] = [];
  const word = (token: Token | undefined): string | undefined =>
    token?.kind === 'word' ? token.text.toLowerCase() : undefined;
  const found = (token: Token | undefined): string => describeToken(source, token);
  for (let k = 0; ; k++) {
    const name = sortName(source, tokens, k);
    const key: SortKey = {
      column: resolveColumn(source, columns, name, (tokens[k] as Token).start),
      direction: 'ASC',
    };
    k++;
    const direction = word(tokens[k]);
    const hasDirection = direction === 'asc' || direction === 'desc';
    if (hasDirection) {
      key.direction = direction === 'asc' ? 'ASC' : 'DESC';
      k++;
    }
    if (word(tokens[k]) === 'nulls') {
      const order = word(tokens[k + 1]);
      if (order !== 'first' && order !== 'last') {
        throw source.error(
          tokens[k + 1]?.start ?? source.text.length,
          `expected FIRST or LAST after NULLS, found ${found(tokens[k + 1])}`,
        );
      }
      key.nulls = order === 'first' ? 'FIRST' : 'LAST';
      k += 2;
    }
    keys.push(key);
    const separator = tokens[k];
    if (separator === undefined) {
      return keys;
    }
    if (separator.kind !== 'symbol' || separator.text !== ',') {
      const options =
        key.nulls !== undefined
          ? "','"
          : hasDirection
            ? "NULLS FIRST, NULLS LAST or ','"
            : "ASC, DESC, NULLS FIRST, NULLS LAST or ','";
      throw source.error(
        separator.start,
        `expected ${options} after ${displayName(name)}, found ${found(separator)}`,
      );
    }
  }
}

/** The column name at token `k`: a name, and not the start of a call or a qualified name. */
function sortName(source: SourceText, tokens: readonly Token[], k: number): string {
  const token = tokens[k];
  if (token?.kind !== 'word' && token?.kind !== 'quoted-name') {
    throw source.error(
      token?.start ?? source.text.length,
      `expected a column name${k === 0 ? '' : " after ','"}, found ${describeToken(source, token)}`,
      token?.kind === 'string' ? 'double-quote names: "my column"' : undefined,
    );
  }
  const after = tokens[k + 1];
  if (after?.kind === 'symbol' && (after.text === '(' || after.text === '.')) {
    throw source.error(
      token.start,
      `expected a column name, found ${echo(source.text.slice(token.start, after.end))}`,
      'sort_by takes column names only',
    );
  }
  return token.kind === 'word' ? token.text : token.name;
}

/** `sort_by` as ORDER BY keys (without `ORDER BY`): names and keywords only, no parameters. */
export function compileSortBy(text: string, columns: readonly ResultColumn[]): string {
  return parseSortBy(text, columns)
    .map(
      (key) =>
        `${quoteIdentifier(key.column.name)} ${key.direction}${key.nulls === undefined ? '' : ` NULLS ${key.nulls}`}`,
    )
    .join(', ');
}
