import { ulid } from 'ulid';
import { type ApiError, badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { CsvReadError, type StorageError } from '../storage/storage-error.js';
import { expectedValue, valueFits } from './column-values.js';
import { csvField, NDJSON_LINE, ndjsonBlankLine, type Rejects } from './csv-dialect.js';
import { describeCsvProblem, dropRejects, firstRejectedLine } from './csv-rejects.js';
import { lineAtByte, lineOfCsvRecord } from './file-lines.js';
import { type InsertPlan, planReader, stringList, type ValueSource } from './insert-plan.js';
import { readingParquet, readParquet } from './parquet-body.js';

/**
 * Why an insert failed, found after the fact. The fast path converts every value in one
 * pass and only learns that some value failed; this reads the body again, on a reader
 * connection, and names the first faulty line and column. Undefined when the body is
 * fine, so that the original failure (not a client error) surfaces. Its own reads never
 * fail with DuckDB's error: a read DuckDB refuses even with a rejects table becomes a 400 in
 * words, from the failure's kind.
 */
export async function diagnoseInsert(
  session: Session,
  plan: InsertPlan,
  failure: StorageError,
): Promise<ApiError | undefined> {
  const context = { label: label(plan), fieldCount: plan.fieldCount };
  if (plan.format === 'parquet') return readingParquet(() => findParquetValue(session, plan));
  try {
    const found =
      (await findUnreadableLine(session, plan)) ??
      (plan.format === 'csv' ? await findCsvValue(session, plan) : await findNdjsonProblem(session, plan));
    if (found) return found;
  } catch (error) {
    if (!(error instanceof CsvReadError)) throw error;
    return badRequest(describeCsvProblem(error.problem, undefined, context));
  }
  return failure instanceof CsvReadError
    ? badRequest(describeCsvProblem(failure.problem, undefined, context))
    : undefined;
}

const LABELS = { csv: 'CSV', ndjson: 'NDJSON', parquet: 'Parquet' } as const;
const label = (plan: InsertPlan) => LABELS[plan.format];

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

function valueProblem(plan: InsertPlan, line: number, source: ValueSource, value: string | null): ApiError {
  const { column } = source;
  const where = `${label(plan)} ${plan.format === 'parquet' ? 'row' : 'line'} ${line}, column "${column.name}" (${column.type})`;
  if (value === null && source.key)
    return badRequest(`${where} has no value, and it is a key column: every row needs its key`);
  if (value === null) return badRequest(`${where} has no value, and the column is not nullable`);
  return badRequest(`${where}: ${shown(value)} does not fit; expected ${expectedValue(column)}`);
}

/** Lines DuckDB's reader itself refuses: field counts, quoting, encoding, length. */
async function findUnreadableLine(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  const id = ulid();
  const rejects: Rejects = { table: `insert_rejects_${id}`, scan: `insert_rejects_scan_${id}` };
  // Every field must be read: with count(*) alone DuckDB skips the values, and their UTF-8 check.
  const fields =
    plan.format === 'csv' ? Array.from({ length: plan.fieldCount }, (_, i) => csvField(i)) : [NDJSON_LINE];
  try {
    await session.run(`SELECT count(list_value(${fields.join(', ')})) FROM ${planReader(plan, rejects)}`);
    return await firstRejectedLine(session, rejects, plan.source.parts, {
      label: label(plan),
      fieldCount: plan.fieldCount,
      // NDJSON has no header: its lines are the file's.
      ...(plan.format === 'ndjson' ? { lineOf: (part, byte) => lineAtByte(part.file, byte) } : {}),
    });
  } finally {
    await dropRejects(session, rejects);
  }
}

interface FailingRow {
  ordinal: bigint;
  fits: (boolean | null)[];
  texts: (string | null)[];
}

function firstFailing(plan: InsertPlan, row: FailingRow, line: number): ApiError | undefined {
  const index = row.fits.findIndex((fits) => fits !== true);
  const source = plan.sources[index];
  if (!source) return undefined;
  return valueProblem(plan, line, source, row.texts[index] ?? null);
}

async function findCsvValue(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  if (plan.sources.length === 0) return undefined;
  const fits = plan.sources.map((s) => valueFits(s.column, s.text));
  const [row] = await session.all<FailingRow>(
    `SELECT ordinal, [${fits.join(', ')}] AS fits, [${plan.sources.map((s) => s.text).join(', ')}] AS texts
       FROM (SELECT row_number() OVER () AS ordinal, * FROM ${planReader(plan)})
      WHERE NOT (${fits.join(' AND ')})
      ORDER BY ordinal LIMIT 1`,
  );
  if (!row) return undefined;
  const line = await lineOfCsvRecord(plan.file, Number(row.ordinal), plan.fieldCount);
  return firstFailing(plan, row, line);
}

/** The first row of a Parquet body with a value that does not fit its column (rows count from 1). */
async function findParquetValue(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  if (plan.sources.length === 0) return undefined;
  const fits = plan.sources.map((s) => valueFits(s.column, s.text));
  const [row] = await session.all<FailingRow>(
    `SELECT file_row_number + 1 AS ordinal, [${fits.join(', ')}] AS fits, [${plan.sources.map((s) => s.text).join(', ')}] AS texts
       FROM ${readParquet(plan.file, true)}
      WHERE NOT (${fits.join(' AND ')})
      ORDER BY file_row_number LIMIT 1`,
  );
  return row ? firstFailing(plan, row, Number(row.ordinal)) : undefined;
}

interface FailingLine extends FailingRow {
  valid: boolean;
  kind: string | null;
  keys: string[] | null;
  kinds: (string | null)[] | null;
}

async function findNdjsonProblem(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  const names = plan.sources.map((s) => s.column.name);
  const fits = plan.sources.map((s) => valueFits(s.column, s.text));
  const pointers = stringList(plan.pointers);
  const objectOnly = (expression: string) => `CASE WHEN kind = 'OBJECT' THEN ${expression} END`;
  const [row] = await session.all<FailingLine>(
    `WITH numbered AS (SELECT row_number() OVER () AS ordinal, ${NDJSON_LINE} FROM ${planReader(plan)}),
          parsed AS (SELECT ordinal, ${NDJSON_LINE}, json_valid(${NDJSON_LINE}) AS valid FROM numbered WHERE NOT ${ndjsonBlankLine}),
          shaped AS (SELECT *, CASE WHEN valid THEN json_type(${NDJSON_LINE}) END AS kind FROM parsed),
          objects AS (
            SELECT ordinal, valid, kind, ${NDJSON_LINE},
                   ${objectOnly(`json_keys(${NDJSON_LINE})`)} AS keys,
                   ${objectOnly(`json_type(${NDJSON_LINE}, ${pointers})`)} AS kinds,
                   ${objectOnly(`json_extract_string(${NDJSON_LINE}, ${pointers})`)} AS ${plan.valuesName}
              FROM shaped),
          texts AS (SELECT ordinal, valid, kind, keys, kinds, ${plan.textColumns} FROM objects)
     SELECT ordinal, valid, kind, keys, kinds, [${fits.join(', ')}] AS fits,
            [${plan.sources.map((s) => s.text).join(', ')}] AS texts
       FROM texts
      WHERE NOT valid OR kind <> 'OBJECT' OR NOT list_has_all(${stringList(names)}, keys)
         OR len(keys) <> len(list_distinct(keys))
         OR list_has_any(kinds, ['OBJECT', 'ARRAY']) OR NOT (${fits.join(' AND ')})
      ORDER BY ordinal LIMIT 1`,
  );
  if (!row) return undefined;
  const line = Number(row.ordinal);
  const where = `NDJSON line ${line}`;
  if (!row.valid) return badRequest(`${where} is not valid JSON`);
  if (row.kind !== 'OBJECT') return badRequest(`${where} is not a JSON object`);
  const unknown = (row.keys ?? []).filter((key) => !names.includes(key));
  if (unknown.length > 0) {
    return badRequest(
      `${where}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}; the table's columns are ${names.join(', ')}`,
    );
  }
  const repeated = (row.keys ?? []).find((key, i, keys) => keys.indexOf(key) !== i);
  if (repeated !== undefined)
    return badRequest(`${where}: key ${JSON.stringify(repeated)} appears more than once`);
  const nested = (row.kinds ?? []).findIndex((kind) => kind === 'OBJECT' || kind === 'ARRAY');
  if (nested >= 0) {
    return badRequest(
      `${where}, column "${names[nested]}": nested objects and arrays are not accepted; send a string, number, boolean or null`,
    );
  }
  return firstFailing(plan, row, line);
}
