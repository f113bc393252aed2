import { type ApiError, badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import {
  castExpression,
  convertExpression,
  doubleOf,
  fitsMask,
  fitsTypeCondition,
  type InferredType,
  shownType,
  sourceColumn,
  typeFromFit,
} from './csv-column-types.js';
import { type FieldSource, numberedFields, ordinalColumn, rowLine, rowLines } from './field-source.js';

/**
 * What an upload says about its types (issue 24): which columns were widened to text by a
 * few values, the first of those values and its line, and the refusals of `strict` and
 * `types`. Everything here runs only when something is to be said: on the happy path the
 * loader's own inference of the sample decides that there is nothing (see `isWideningCandidate`).
 */

/** A column stored as text because some of its values fit no type its other values share. */
export interface Widening {
  column: string;
  /** The first value (in body order) that does not fit `otherwise`. */
  value: string;
  line: number;
  /** Values that do not fit `otherwise`, `value` included. */
  count: number;
  /** The type the column would have without those values. */
  otherwise: InferredType;
}

/** What the inference saw of a column's values: all of them, and those that fit some type. */
export interface ValueCounts {
  values: number;
  typed: number;
}

/**
 * A text column is looked at more closely when most of its values (in the part the inference
 * read) fit some type: a column of amounts with an `n/a`, not a column of names with a `1inch`.
 */
export function isWideningCandidate(counts: ValueCounts | undefined): boolean {
  return counts === undefined || (counts.typed > 0 && counts.typed * 2 >= counts.values);
}

const x = sourceColumn(0);

interface FitSummary {
  col: number;
  mask: number | null;
  i: bigint | null;
  f: bigint | null;
  first: number | null;
  fi: bigint | null;
  ff: bigint | null;
}

/** The type a text column would have without its odd values: its typed values' type, else its first typed value's. */
function typeWithout(summary: FitSummary): InferredType | undefined {
  if (summary.mask === null) return undefined;
  const all = typeFromFit({
    mask: Number(summary.mask),
    maxIntegerDigits: Number(summary.i ?? 0),
    maxFractionDigits: Number(summary.f ?? 0),
  });
  if (all.kind !== 'VARCHAR') return all;
  const first = typeFromFit({
    mask: Number(summary.first),
    maxIntegerDigits: Number(summary.fi ?? 0),
    maxFractionDigits: Number(summary.ff ?? 0),
  });
  return first.kind === 'VARCHAR' ? undefined : first;
}

/**
 * The widenings of `columns` (stored as text): for each, undefined when its values are text
 * from the first one on. A column's typed values give the type it would have had; when they
 * share none (dates and numbers), its first typed value's type does. One read of the body for
 * all the columns, and one scan for their lines, whatever their number.
 */
export async function findWidenings(
  session: Session,
  source: FieldSource,
  columns: readonly { index: number; name: string }[],
): Promise<Widening[]> {
  if (columns.length === 0) return [];
  const indexes = columns.map((c) => c.index);
  const values = `(SELECT ${ordinalColumn} AS o, unnest([${indexes.join(', ')}]) AS col, unnest([${indexes.map(sourceColumn).join(', ')}]) AS ${x} FROM ${numberedFields(source)})`;
  const fit = fitsMask(x, quoteD);
  const table = 'upload_widenings';
  await session.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
       SELECT col, o, ${x}, ${fit.mask} AS mask, ${fit.integerDigits} AS i, ${fit.fractionDigits} AS f
         FROM (SELECT *, ${doubleOf(x)} AS ${quoteD} FROM ${values} WHERE ${x} IS NOT NULL)`,
  );
  try {
    const summaries = await session.all<FitSummary>(
      `SELECT col, bit_and(mask) FILTER (WHERE mask <> 0) AS mask, max(i) FILTER (WHERE mask <> 0) AS i, max(f) FILTER (WHERE mask <> 0) AS f,
              arg_min(mask, o) FILTER (WHERE mask <> 0) AS first, arg_min(i, o) FILTER (WHERE mask <> 0) AS fi, arg_min(f, o) FILTER (WHERE mask <> 0) AS ff
         FROM ${table} GROUP BY col`,
    );
    const otherwise = new Map<number, InferredType>();
    for (const summary of summaries) {
      const type = typeWithout(summary);
      if (type) otherwise.set(Number(summary.col), type);
    }
    if (otherwise.size === 0) return [];
    // Each column's values that do not fit its type without them, as one condition per column.
    const misfit = [...otherwise].map(
      ([col, type]) => `(col = ${col} AND NOT ${fitsTypeCondition('mask', 'i', 'f', type)})`,
    );
    const found = await session.all<{ col: number; o: bigint; value: string; n: bigint }>(
      `SELECT col, min(o) AS o, arg_min(${x}, o) AS value, count(*) AS n FROM ${table} WHERE ${misfit.join(' OR ')} GROUP BY col`,
    );
    const lines = await rowLines(
      source,
      found.map((row) => Number(row.o)),
    );
    const names = new Map(columns.map((c) => [c.index, c.name]));
    return found.map((row) => ({
      column: names.get(Number(row.col)) as string,
      value: row.value,
      line: lines.get(Number(row.o)) as number,
      count: Number(row.n),
      otherwise: otherwise.get(Number(row.col)) as InferredType,
    }));
  } finally {
    await session.run(`DROP TABLE IF EXISTS ${table}`);
  }
}

const quoteD = '"d"';

/** Where a widening is said in words: `amount: "n/a" on line 1,234 made the column varchar …`. */
export function describeWidening(widening: Widening, label: string): string {
  const more = widening.count > 1 ? ` (and ${(widening.count - 1).toLocaleString('en-US')} more)` : '';
  return `${widening.column}: ${shownValue(widening.value)} on ${label} line ${widening.line.toLocaleString('en-US')}${more} made the column varchar; without ${widening.count > 1 ? 'them' : 'it'} it would be ${shownType(widening.otherwise)}`;
}

/** `strict`: the first widening refuses the upload. */
export function strictRefusal(widening: Widening, label: string): ApiError {
  return badRequest(
    `${label} line ${widening.line.toLocaleString('en-US')}, column "${widening.column}": ${shownValue(widening.value)} is not a ${shownType(widening.otherwise)} like the column's other values, and "strict" refuses to widen the column to varchar; nothing was stored. Fix the value, send "types": {"${widening.column}": "varchar"}, or upload without "strict"`,
  );
}

/**
 * The first value of column `index` that does not fit the type the client pinned (`types`),
 * as a 400 naming its line; undefined when every value fits.
 */
export async function pinnedMisfit(
  session: Session,
  source: FieldSource,
  index: number,
  name: string,
  type: InferredType,
  label: string,
): Promise<ApiError | undefined> {
  const text = sourceColumn(index);
  const cast = castExpression(type, text);
  const value = convertExpression(type, text, cast ?? text);
  const [row] = await session.all<{ o: bigint; v: string }>(
    `SELECT ${ordinalColumn} AS o, ${text} AS v FROM ${numberedFields(source)}
      WHERE ${text} IS NOT NULL AND (${value}) IS NULL ORDER BY ${ordinalColumn} LIMIT 1`,
  );
  if (!row) return undefined;
  const line = await rowLine(source, Number(row.o));
  return badRequest(
    `${label} line ${line.toLocaleString('en-US')}, column "${name}": ${shownValue(row.v)} is not a ${shownType(type)}, the type given in "types"; nothing was stored`,
  );
}

function shownValue(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}
