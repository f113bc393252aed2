import { type ApiError, badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { quoteIdentifier } from '../storage/sql.js';
import type { CsvProblem } from '../storage/storage-error.js';
import { type CsvPart, MAX_RECORD_BYTES, type Rejects } from './csv-dialect.js';
import { lineAtByte } from './file-lines.js';

/**
 * The lines DuckDB's reader refuses, found after the fact: a read with a rejects table
 * records them instead of failing, and the first one becomes a 400 naming its line. Uploads
 * and inserts read their rejects here, and word every reader problem here.
 */

/** The kinds of faulty line the rejects table records, and what each means. */
type RejectKind = CsvProblem | 'fewer-fields' | 'more-fields';

const REJECT_KINDS: Record<string, RejectKind> = {
  'MISSING COLUMNS': 'fewer-fields',
  'TOO MANY COLUMNS': 'more-fields',
  'UNQUOTED VALUE': 'text-after-quote',
  'INVALID ENCODING': 'encoding',
  'INVALID UNICODE': 'encoding',
  'LINE SIZE OVER MAXIMUM': 'line-too-long',
};

export interface ProblemContext {
  /** `CSV` or `NDJSON`. */
  label: string;
  /** Fields per record, for CSV. */
  fieldCount: number;
}

/** A reader problem in words; `line` undefined when not even DuckDB could say where. */
export function describeCsvProblem(
  kind: RejectKind,
  line: number | undefined,
  context: ProblemContext,
): string {
  const where = line === undefined ? `the ${context.label}` : `${context.label} line ${line}`;
  switch (kind) {
    case 'fewer-fields':
      return `${where} has fewer fields than the ${context.fieldCount} columns of the header`;
    case 'more-fields':
      return context.label === 'CSV'
        ? `${where} has more fields than the ${context.fieldCount} columns of the header`
        : `${where} is not valid JSON: it holds a raw control character`;
    case 'field-count':
      return `${where} does not have the ${context.fieldCount} fields of the header`;
    case 'unterminated-quote':
      return `${where}: a quoted value is never closed (its closing quote is missing)`;
    case 'text-after-quote':
      return `${where}: a quoted value is not closed, or text follows its closing quote; inside quotes, write a quote as ""`;
    case 'encoding':
      return `${where} is not valid UTF-8`;
    case 'line-too-long':
      return `${where} is longer than ${MAX_RECORD_BYTES} bytes, the most one record may take`;
    case 'line-ends':
      return `${where} mixes line ends or holds a carriage return outside quotes; end every line with \\n, or every line with \\r\\n`;
    case 'unreadable':
      return `${where} could not be read as ${context.label}`;
  }
}

interface RejectRow {
  line_byte_position: bigint | null;
  byte_position: bigint | null;
  error_type: string;
  file_path: string;
}

/**
 * The first line the read recorded in `rejects`, as a 400 naming the body's line, or
 * undefined when none was recorded. `parts` are the files read, in order.
 */
export async function firstRejectedLine(
  session: Session,
  rejects: Rejects,
  parts: readonly CsvPart[],
  context: ProblemContext & { lineOf?: (part: CsvPart, byte: number) => Promise<number> },
): Promise<ApiError | undefined> {
  const rows = await session.all<RejectRow>(
    `SELECT r.line_byte_position, r.byte_position, CAST(r.error_type AS VARCHAR) AS error_type, s.file_path
       FROM temp.${quoteIdentifier(rejects.table)} r JOIN temp.${quoteIdentifier(rejects.scan)} s USING (scan_id, file_id)`,
  );
  let first: { part: number; byte: number; kind: RejectKind } | undefined;
  for (const row of rows) {
    const part = parts.findIndex((p) => p.file === row.file_path);
    const byte = Number(row.line_byte_position ?? row.byte_position ?? 0);
    if (first === undefined || part < first.part || (part === first.part && byte < first.byte)) {
      first = { part, byte, kind: REJECT_KINDS[row.error_type] ?? 'unreadable' };
    }
  }
  if (!first) return undefined;
  const part = parts[Math.max(first.part, 0)] as CsvPart;
  const line = await (context.lineOf ?? lineInPart)(part, first.byte);
  return badRequest(describeCsvProblem(first.kind, line, context));
}

/** The body's line of byte `byte` of a part, whose line 1 is a copy of the header. */
export async function lineInPart(part: CsvPart, byte: number): Promise<number> {
  return part.firstLine + (await lineAtByte(part.file, byte)) - 2;
}

export async function dropRejects(session: Session, rejects: Rejects): Promise<void> {
  for (const table of [rejects.table, rejects.scan]) {
    await session.run(`DROP TABLE IF EXISTS temp.${quoteIdentifier(table)}`).catch(() => undefined);
  }
}
