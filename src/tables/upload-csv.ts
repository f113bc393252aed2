import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ulid } from 'ulid';
import type { Account } from '../auth/account.js';
import { badRequest, forbidden } from '../errors.js';
import type { Database } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { InterruptedError } from '../storage/storage-error.js';
import { ClientGoneError, receiveInto } from './body-to-file.js';
import type { LineEnd } from './csv-dialect.js';
import { type LoadedColumn, type PartFeed, StagedLoad } from './csv-loader.js';
import { saveTable } from './table-catalog.js';
import { uploadedTableName, validateTableName } from './table-name.js';
import { UploadBodyDecoder } from './upload-body-decoder.js';
import { partsFolder, type UploadPart, UploadParts } from './upload-parts.js';

/**
 * The CSV upload operation (spec §4.1). The JSON body streams through the decoder into
 * parts on disk (upload-parts.ts); the first part gives the column types, and the parts are
 * loaded into a staging table in statements of about 32 MB as they are written
 * (csv-loader.ts), so the load runs while the rest arrives. Once all is loaded, one write transaction renames the staging
 * table over the target and records it: readers see the old table or the new one, and any
 * failure leaves the old one.
 */

export interface ReceivedUpload {
  /** The folder of the CSV's parts; the caller removes it with `discardUpload`. */
  dir: string;
  fields: Map<string, unknown>;
  hasData: boolean;
  /** Bytes of CSV, as decoded from `data`. */
  dataBytes: number;
  /** Bytes of CSV stored: trailing blank lines not counted. */
  csvBytes: number;
  /** The header's names; undefined for an empty CSV. */
  columns: string[] | undefined;
  load: StagedLoad | undefined;
}

/** The parts as the loader takes them: whatever has arrived since it last asked. */
class PartQueue implements PartFeed {
  private parts: UploadPart[] = [];
  private bytes = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(readonly lineEnd: () => LineEnd) {}

  push(part: UploadPart): void {
    this.parts.push(part);
    this.bytes += part.bytes;
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  fail(error: Error): void {
    this.failure = error;
    this.wake?.();
  }

  async next(bytes: number): Promise<UploadPart[]> {
    while ((this.parts.length === 0 || this.bytes < bytes) && !this.ended && !this.failure) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    if (this.failure) throw this.failure;
    const parts = this.parts;
    this.parts = [];
    this.bytes = 0;
    return parts;
  }
}

/**
 * Receives an upload's body: decodes it to CSV parts on disk and starts loading them into a
 * staging table of `namespace` as they come. The body stream itself is never destroyed here:
 * after an early error the HTTP layer still has to answer on its connection.
 */
export async function receiveUpload(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  database: Database,
  namespace: string,
): Promise<ReceivedUpload> {
  const id = ulid();
  const dir = await partsFolder(tmpDir, id);
  const decoder = new UploadBodyDecoder();
  const parts = new UploadParts(dir);
  const queue = new PartQueue(() => parts.lineEnd);
  let load: StagedLoad | undefined;
  parts.events.on('part', (part) => {
    queue.push(part);
    if (load || !parts.columns) return;
    load = new StagedLoad(database, { namespace, jobId: id, columnNames: parts.columns }, queue, (error) =>
      parts.stop(error),
    );
  });
  try {
    await receiveInto(body, maxBytes, [decoder, parts]);
    queue.end();
  } catch (error) {
    queue.fail(error as Error);
    await discardUpload({ dir, load });
    throw error;
  }
  const decoded = decoder.result;
  if (!decoded) {
    await discardUpload({ dir, load });
    throw badRequest('malformed JSON body: the body ended early');
  }
  return { dir, ...decoded, csvBytes: parts.bytes, columns: parts.columns, load };
}

/** Stops an upload's load and removes everything it left: parts, staging table. */
export async function discardUpload(received: Pick<ReceivedUpload, 'dir' | 'load'>): Promise<void> {
  const { load } = received;
  if (load) {
    load.abandon();
    if (await load.result.catch(() => undefined)) await load.drop();
  }
  await fs.rm(received.dir, { recursive: true, force: true });
}

interface UploadFields {
  tableName: string;
  description: string;
  isPrivate: boolean;
}

function readFields(received: ReceivedUpload): UploadFields {
  const { fields } = received;
  if (!received.hasData) throw badRequest('field "data" is required: the CSV text, header line first');
  if (!fields.has('table_name')) throw badRequest('field "table_name" is required');
  const tableName = validateTableName(fields.get('table_name'));
  const description = fields.get('description') ?? '';
  if (typeof description !== 'string') throw badRequest('field "description" must be a string');
  const isPrivate = fields.get('is_private') ?? false;
  if (typeof isPrivate !== 'boolean') throw badRequest('field "is_private" must be true or false');
  return { tableName, description, isPrivate };
}

export interface StoredUpload {
  tableName: string;
  rowCount: number;
  columns: LoadedColumn[];
  /** The load's steps, for the log (StagedTable.steps). */
  steps: string;
}

/**
 * Stores a received upload as `<handle>.dataset_<table_name>`, once its load has finished.
 * `gone` aborts when the client leaves before the answer: the load is interrupted and
 * nothing is stored.
 */
export async function storeUpload(
  database: Database,
  account: Account,
  received: ReceivedUpload,
  gone?: AbortSignal,
): Promise<StoredUpload> {
  const fields = readFields(received);
  if (fields.isPrivate && account.plan !== 'premium') {
    throw forbidden('private tables need a premium plan; upload with "is_private": false or upgrade the key');
  }
  const { load } = received;
  if (!received.columns || !load)
    throw badRequest('field "data" is empty: it must hold a CSV with a header line');
  const abandon = () => load.abandon();
  gone?.addEventListener('abort', abandon);
  let staged: Awaited<StagedLoad['result']>;
  try {
    if (gone?.aborted) abandon();
    staged = await load.result;
  } catch (error) {
    if (error instanceof InterruptedError && gone?.aborted) throw new ClientGoneError();
    throw error;
  } finally {
    gone?.removeEventListener('abort', abandon);
  }
  const namespace = account.handle;
  const tableName = uploadedTableName(fields.tableName);
  await database.write(async (session) => {
    await session.run(`DROP TABLE IF EXISTS ${qualifiedName(namespace, tableName)}`);
    await session.run(`ALTER TABLE ${load.qualified} RENAME TO ${quoteIdentifier(tableName)}`);
    await saveTable(session, {
      namespace,
      tableName,
      description: fields.description,
      isPrivate: fields.isPrivate,
      updatedAt: new Date(),
      rowCount: staged.rowCount,
      sizeBytes: received.csvBytes,
    });
  });
  load.renamed();
  return { tableName, rowCount: staged.rowCount, columns: staged.columns, steps: staged.steps };
}
