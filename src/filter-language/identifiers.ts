import { echo, type SourceText } from './errors.js';
import { nearestNames } from './nearest-names.js';
import { quoteIdentifier } from './quote-identifier.js';

export { quoteIdentifier };

/** A column of a result, as the results layer knows it. `type` is DuckDB's type name in lower case. */
export interface ResultColumn {
  name: string;
  type: string;
}

/** A name that may be written without quotes: a letter or `_`, then letters, marks, digits, `_`. */
export const BARE_NAME_START = /[\p{L}_]/u;
export const BARE_NAME_PART = /[\p{L}\p{M}\p{N}_]/u;
const BARE_NAME = /^[\p{L}_][\p{L}\p{M}\p{N}_]*$/u;

/** Words of the filter language; a column with one of these names must be double-quoted. */
export const FILTER_KEYWORDS: ReadonlySet<string> = new Set([
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

/**
 * How a client would write this column name: bare when it can be, double-quoted otherwise, with
 * `""` for a quote unless a backslash precedes one (`""` after a backslash would read as `\"` and `"`).
 */
export function displayName(name: string): string {
  if (BARE_NAME.test(name) && !FILTER_KEYWORDS.has(name.toLowerCase())) {
    return name;
  }
  return name.includes('\\"') ? `"${name.replaceAll('"', '\\"')}"` : quoteIdentifier(name);
}

const MAX_LISTED_COLUMNS = 60;

export function listColumns(columns: readonly ResultColumn[]): string {
  const names = columns.slice(0, MAX_LISTED_COLUMNS).map((c) => displayName(c.name));
  const more = columns.length - names.length;
  return more > 0 ? `${names.join(', ')} and ${more} more` : names.join(', ');
}

/**
 * Finds the column a name refers to. As in SQL, names match ignoring case; an exact spelling
 * wins, so that a result with both `a` and `A` (possible for a saved query) stays addressable.
 * `index` is where the name starts in the source text, for the error.
 */
export function resolveColumn(
  source: SourceText,
  columns: readonly ResultColumn[],
  name: string,
  index: number,
): ResultColumn {
  const exact = columns.find((c) => c.name === name);
  if (exact !== undefined) {
    return exact;
  }
  const folded = name.toLowerCase();
  const matches = columns.filter((c) => c.name.toLowerCase() === folded);
  if (matches.length === 1 && matches[0] !== undefined) {
    return matches[0];
  }
  if (matches.length > 1) {
    throw source.error(
      index,
      `column ${echo(name, '"')} is ambiguous`,
      `write one of ${matches.map((c) => displayName(c.name)).join(', ')} with its exact spelling`,
    );
  }
  const near = nearestNames(
    name,
    columns.map((c) => c.name),
  ).map(displayName);
  const guess = near.length > 0 ? `did you mean ${near.join(' or ')}? ` : '';
  throw source.error(
    index,
    `unknown column ${echo(name, '"')}`,
    columns.length === 0 ? 'the result has no columns' : `${guess}valid columns: ${listColumns(columns)}`,
  );
}
