import { ulid } from 'ulid';
import { type ApiError, badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { quoteIdentifier } from '../storage/sql.js';
import { expectedValue, valueFits } from './column-values.js';
import { lineOfCsvRecord } from './csv-record-lines.js';
import { lineAtByte } from './file-lines.js';
import type { InsertPlan } from './insert-plan.js';
import {
  csvField,
  csvReader,
  NDJSON_LINE,
  ndjsonBlankLine,
  ndjsonLineReader,
  type Rejects,
  stringList,
} from './insert-readers.js';
import type { DeclaredColumn } from './table-schema.js';

/**
 * Why an insert failed, found after the fact. The fast path converts every value in one
 * pass and only learns that some value failed; this reads the body again, on a reader
 * connection, and names the first faulty line and column. Undefined when the body is
 * fine, so that the original failure (not a client error) surfaces.
 */
export async function diagnoseInsert(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  return (
    (await findUnreadableLine(session, plan)) ??
    (plan.format === 'csv' ? await findCsvValue(session, plan) : await findNdjsonProblem(session, plan))
  );
}

const label = (plan: InsertPlan) => (plan.format === 'csv' ? 'CSV' : 'NDJSON');

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

function valueProblem(
  plan: InsertPlan,
  line: number,
  column: DeclaredColumn,
  value: string | null,
): ApiError {
  const where = `${label(plan)} line ${line}, column "${column.name}" (${column.type})`;
  if (value === null) return badRequest(`${where} has no value, and the column is not nullable`);
  return badRequest(`${where}: ${shown(value)} does not fit; expected ${expectedValue(column)}`);
}

interface RejectRow {
  line_byte_position: bigint | null;
  byte_position: bigint | null;
  error_type: string;
}

/** Lines DuckDB's reader itself refuses: field counts, quoting, encoding, length. */
async function findUnreadableLine(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  const id = ulid();
  const rejects: Rejects = { table: `insert_rejects_${id}`, scan: `insert_rejects_scan_${id}` };
  const reader = plan.format === 'csv' ? csvReader(plan.fieldCount, rejects) : ndjsonLineReader(rejects);
  // Every field must be read: with count(*) alone DuckDB skips the values, and their UTF-8 check.
  const fields =
    plan.format === 'csv' ? Array.from({ length: plan.fieldCount }, (_, i) => csvField(i)) : [NDJSON_LINE];
  try {
    await session.run(`SELECT ${fields.map((field) => `count(${field})`).join(', ')} FROM ${reader}`, [
      plan.file,
    ]);
    const [reject] = await session.all<RejectRow>(
      `SELECT line_byte_position, byte_position, CAST(error_type AS VARCHAR) AS error_type
         FROM temp.${quoteIdentifier(rejects.table)} ORDER BY line_byte_position, byte_position LIMIT 1`,
    );
    if (!reject) return undefined;
    const line = await lineAtByte(plan.file, Number(reject.line_byte_position ?? reject.byte_position ?? 0));
    return badRequest(describeReject(plan, reject.error_type, line));
  } finally {
    for (const table of [rejects.table, rejects.scan]) {
      await session.run(`DROP TABLE IF EXISTS temp.${quoteIdentifier(table)}`).catch(() => undefined);
    }
  }
}

function describeReject(plan: InsertPlan, type: string, line: number): string {
  const where = `${label(plan)} line ${line}`;
  switch (type) {
    case 'MISSING COLUMNS':
      return `${where} has fewer fields than the ${plan.fieldCount} columns of the header`;
    case 'TOO MANY COLUMNS':
      return plan.format === 'csv'
        ? `${where} has more fields than the ${plan.fieldCount} columns of the header`
        : `${where} is not valid JSON: it holds a raw control character`;
    case 'UNQUOTED VALUE':
      return `${where}: a quoted value is not closed, or text follows its closing quote`;
    case 'INVALID ENCODING':
    case 'INVALID UNICODE':
      return `${where} is not valid UTF-8`;
    case 'LINE SIZE OVER MAXIMUM':
      return `${where} is longer than the maximum line size (2 MB)`;
    default:
      return `${where} could not be read (${type.toLowerCase()})`;
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
  return valueProblem(plan, line, source.column, row.texts[index] ?? null);
}

async function findCsvValue(session: Session, plan: InsertPlan): Promise<ApiError | undefined> {
  if (plan.sources.length === 0) return undefined;
  const fits = plan.sources.map((s) => valueFits(s.column, s.text));
  const [row] = await session.all<FailingRow>(
    `SELECT ordinal, [${fits.join(', ')}] AS fits, [${plan.sources.map((s) => s.text).join(', ')}] AS texts
       FROM (SELECT row_number() OVER () AS ordinal, * FROM ${csvReader(plan.fieldCount)})
      WHERE NOT (${fits.join(' AND ')})
      ORDER BY ordinal LIMIT 1`,
    [plan.file],
  );
  if (!row) return undefined;
  const line = await lineOfCsvRecord(plan.file, Number(row.ordinal), plan.fieldCount);
  return firstFailing(plan, row, line);
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
    `WITH numbered AS (SELECT row_number() OVER () AS ordinal, ${NDJSON_LINE} FROM ${ndjsonLineReader()}),
          parsed AS (SELECT ordinal, ${NDJSON_LINE}, json_valid(${NDJSON_LINE}) AS valid FROM numbered WHERE NOT ${ndjsonBlankLine}),
          shaped AS (SELECT *, CASE WHEN valid THEN json_type(${NDJSON_LINE}) END AS kind FROM parsed),
          objects AS (
            SELECT ordinal, valid, kind,
                   ${objectOnly(`json_keys(${NDJSON_LINE})`)} AS keys,
                   ${objectOnly(`json_type(${NDJSON_LINE}, ${pointers})`)} AS kinds,
                   ${objectOnly(`json_extract_string(${NDJSON_LINE}, ${pointers})`)} AS ${plan.valuesName}
              FROM shaped)
     SELECT ordinal, valid, kind, keys, kinds, [${fits.join(', ')}] AS fits, ${plan.valuesName} AS texts
       FROM objects
      WHERE NOT valid OR kind <> 'OBJECT' OR NOT list_has_all(${stringList(names)}, keys)
         OR len(keys) <> len(list_distinct(keys))
         OR list_has_any(kinds, ['OBJECT', 'ARRAY']) OR NOT (${fits.join(' AND ')})
      ORDER BY ordinal LIMIT 1`,
    [plan.file],
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
