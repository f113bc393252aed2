import path from 'node:path';
import type { Readable } from 'node:stream';
import { ulid } from 'ulid';
import { ApiError } from '../errors.js';
import type { Database, InterruptibleSession } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { InterruptedError, OutOfMemoryError } from '../storage/storage-error.js';
import { bodyToFile } from './body-to-file.js';
import { outOfMemory, STAGING_PREFIX, type StagedTable } from './csv-loader.js';
import {
  checkParquetFile,
  type ParquetColumn,
  parquetColumns,
  readingParquet,
  readParquet,
} from './parquet-body.js';
import { partsFolder } from './upload-parts.js';
import { discardUpload, type ReceivedUpload, type UploadLoad } from './upload-store.js';

/**
 * A Parquet upload: the file is streamed to disk, checked (parquet-body.ts), and copied into a
 * staging table by DuckDB's Parquet reader on a connection of its own, which a client that
 * leaves (or shutdown) interrupts. The schema is the file's: nothing is inferred or widened.
 */
class ParquetLoad implements UploadLoad {
  readonly result: Promise<StagedTable>;
  private session: InterruptibleSession | undefined;
  private running = true;
  private abandoned = false;
  private consumed = false;
  readonly qualified: string;
  private readonly staging: string;

  constructor(
    private readonly database: Database,
    namespace: string,
    jobId: string,
    file: string,
    columns: readonly ParquetColumn[],
  ) {
    this.staging = `${STAGING_PREFIX}${jobId.toLowerCase()}`;
    this.qualified = qualifiedName(namespace, this.staging);
    this.result = database
      .dedicated((session) => this.run(session, namespace, file, columns))
      .finally(() => {
        this.running = false;
      });
    this.result.catch(() => undefined);
  }

  abandon(): void {
    this.abandoned = true;
    if (this.running) this.session?.interrupt();
  }

  renamed(): void {
    this.consumed = true;
  }

  async drop(): Promise<void> {
    if (this.consumed) return;
    await this.database
      .write((session) => session.run(`DROP TABLE IF EXISTS ${this.qualified}`))
      .catch(() => undefined);
  }

  private async run(
    session: InterruptibleSession,
    namespace: string,
    file: string,
    columns: readonly ParquetColumn[],
  ): Promise<StagedTable> {
    this.session = session;
    await this.database.write((writer) =>
      writer.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(namespace)}`),
    );
    if (this.abandoned) throw new InterruptedError('the upload was abandoned');
    const started = performance.now();
    try {
      await session.run('BEGIN TRANSACTION');
      await readingParquet(() =>
        session.run(`CREATE TABLE ${this.qualified} AS SELECT * FROM ${readParquet(file)}`),
      );
      const [row] = await session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${this.qualified}`);
      await session.run('COMMIT');
      return {
        staging: this.staging,
        rowCount: Number(row?.n ?? 0),
        columns: columns.map((column) => ({ name: column.name, type: column.type.toLowerCase() })),
        widened: [],
        steps: `parquet:0+${Math.round(performance.now() - started)}`,
      };
    } catch (error) {
      await session.run('ROLLBACK').catch(() => undefined);
      if (error instanceof OutOfMemoryError) throw outOfMemory(columns.length);
      if (error instanceof InterruptedError && !this.abandoned) {
        throw new ApiError('unavailable', 'the server is stopping: the upload was not stored; send it again');
      }
      throw error;
    }
  }
}

/** Receives a Parquet upload and starts its load. */
export async function receiveParquetUpload(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  database: Database,
  namespace: string,
): Promise<ReceivedUpload> {
  const id = ulid();
  const dir = await partsFolder(tmpDir, id);
  try {
    const file = path.join(dir, 'body.parquet');
    const bytes = await bodyToFile(body, file, maxBytes);
    await checkParquetFile(file);
    const columns = await database.read((session) => parquetColumns(session, file));
    const load = new ParquetLoad(database, namespace, id, file, columns);
    return { dir, bytes, load, emptyMessage: 'the body is empty' };
  } catch (error) {
    await discardUpload({ dir, load: undefined });
    throw error;
  }
}
