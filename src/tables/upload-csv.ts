import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ulid } from 'ulid';
import type { Account } from '../auth/account.js';
import { badRequest, forbidden } from '../errors.js';
import type { Database } from '../storage/database.js';
import { bodyToFile, discard } from './body-to-file.js';
import type { InferredType } from './csv-column-types.js';
import { parseCsvHeader, validateColumnNames } from './csv-header.js';
import { inferFromSample, type LoadedColumn, replaceTableWithCsv } from './csv-loader.js';
import { trimTrailingNewlines } from './file-lines.js';
import { saveTable } from './table-catalog.js';
import { uploadedTableName, validateTableName } from './table-name.js';
import { UploadBodyDecoder } from './upload-body-decoder.js';

/**
 * The CSV upload operation (spec §4.1): the JSON body streams through the decoder into a
 * temporary file, then one write transaction loads it with DuckDB's reader and replaces the
 * table, so readers see the old table or the new one and a failure leaves the old one.
 */

export interface ReceivedUpload {
  /** The decoded CSV on disk; the caller removes it with `discard`. */
  file: string;
  fields: Map<string, unknown>;
  hasData: boolean;
  dataBytes: number;
  head: Buffer;
  /** Column types inferred from the first rows while the body was arriving. */
  sampled?: Promise<InferredType[] | undefined>;
}

/**
 * Streams `body` to a temporary file through the byte limit and the decoder. The body
 * stream itself is never destroyed here: after an early error the HTTP layer still has to
 * answer on its connection.
 */
export async function receiveUpload(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  database?: Database,
): Promise<ReceivedUpload> {
  await fs.mkdir(tmpDir, { recursive: true });
  const file = path.join(tmpDir, `upload-${ulid()}.csv`);
  const decoder = new UploadBodyDecoder();
  let sampled: Promise<InferredType[] | undefined> | undefined;
  if (database) {
    decoder.once('head', (head: Buffer, complete: boolean) => {
      sampled = complete ? undefined : startSampleInference(database, `${file}.sample`, head);
    });
  }
  await bodyToFile(body, file, maxBytes, [decoder]);
  const decoded = decoder.result;
  if (!decoded) {
    await discard(file);
    throw badRequest('malformed JSON body: the body ended early');
  }
  return { file, ...decoded, ...(sampled ? { sampled } : {}) };
}

/**
 * Types are inferred from the first rows while the rest of the body streams in, so that
 * inference costs no time of its own. The sample ends at the last line end of the head;
 * a quoted value cut there is a faulty last line, which inference skips.
 */
function startSampleInference(
  database: Database,
  sampleFile: string,
  head: Buffer,
): Promise<InferredType[] | undefined> | undefined {
  let columns: number;
  try {
    const header = parseCsvHeader(head, false);
    if (!header) return undefined;
    columns = header.columns.length;
  } catch {
    return undefined; // The load reports a bad header properly.
  }
  const cut = head.lastIndexOf(0x0a);
  if (cut < 0) return undefined;
  return fs
    .writeFile(sampleFile, head.subarray(0, cut + 1))
    .then(() => inferFromSample(database, sampleFile, columns))
    .catch(() => undefined);
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
}

/** Stores a received upload as `<handle>.dataset_<table_name>`. */
export async function storeUpload(
  database: Database,
  account: Account,
  received: ReceivedUpload,
): Promise<StoredUpload> {
  const fields = readFields(received);
  if (fields.isPrivate && account.plan !== 'premium') {
    throw forbidden('private tables need a premium plan; upload with "is_private": false or upgrade the key');
  }
  const size = await trimTrailingNewlines(received.file);
  const header =
    size > 0
      ? parseCsvHeader(received.head.subarray(0, size), received.dataBytes <= received.head.length)
      : undefined;
  if (!header) throw badRequest('field "data" is empty: it must hold a CSV with a header line');
  validateColumnNames(header.columns);

  const namespace = account.handle;
  const tableName = uploadedTableName(fields.tableName);
  const loaded = await replaceTableWithCsv(
    database,
    {
      file: received.file,
      columnNames: header.columns,
      namespace,
      table: tableName,
      jobId: ulid(),
      ...(received.sampled ? { sampled: received.sampled } : {}),
    },
    (session, loaded) =>
      saveTable(session, {
        namespace,
        tableName,
        description: fields.description,
        isPrivate: fields.isPrivate,
        updatedAt: new Date(),
        rowCount: loaded.rowCount,
        sizeBytes: size,
      }),
  );
  return { tableName, rowCount: loaded.rowCount, columns: loaded.columns };
}
