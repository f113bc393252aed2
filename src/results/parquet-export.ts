import fs from 'node:fs/promises';
import { badRequest } from '../errors.js';
import type { Execution } from '../executions/execution.js';
import type { Database } from '../storage/database.js';
import type { FileBody } from './page-body.js';
import { planRows } from './page-query.js';
import { PARQUET_FORMAT } from './result-format.js';
import type { ResultRequest } from './result-request.js';
import { RowsWriter } from './rows-file.js';

/**
 * An execution's result as a Parquet file, written by DuckDB's own writer from the snapshot
 * (`COPY … TO … (FORMAT parquet)`), with the request's `columns`, `filters` and `sort_by`
 * (and `limit`/`offset`) applied exactly as for JSON and CSV pages (page-query.ts). The file
 * goes to the data directory's temporary folder and is streamed from there, so memory stays
 * flat whatever the result's size; the body's discard() removes it once sent.
 */
export async function writeParquet(
  database: Database,
  execution: Execution,
  request: ResultRequest,
  tmpDir: string,
): Promise<FileBody> {
  if (request.sampleCount !== undefined)
    throw badRequest('query parameter "sample_count" is not available for Parquet files');
  const query = planRows(execution, request, PARQUET_FORMAT).select({
    kind: 'window',
    offset: request.offset,
    limit: request.limit,
  });
  await fs.mkdir(tmpDir, { recursive: true });
  return new RowsWriter(database, tmpDir).write(request.reader ?? '', [{ query }], PARQUET_FORMAT);
}
