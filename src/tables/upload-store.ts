import fs from 'node:fs/promises';
import type { Account } from '../auth/account.js';
import { badRequest, forbidden } from '../errors.js';
import type { Database } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { InterruptedError } from '../storage/storage-error.js';
import { ClientGoneError } from './body-to-file.js';
import type { StagedTable } from './csv-loader.js';
import { findTable, saveTable } from './table-catalog.js';
import { uploadedTableName } from './table-name.js';
import { recordUnversioned, recordVersion, type VersionPolicy, versionTableName } from './table-versions.js';
import type { UploadOptions } from './upload-options.js';
import type { Widening } from './upload-typing.js';

/**
 * Stores an upload whatever its format: its load has made a staging table in the target
 * namespace (csv-loader.ts for CSV and NDJSON, upload-parquet.ts for Parquet); one write
 * transaction renames it over the target and records it. Readers see the old table or the
 * new one, and any failure leaves the old one.
 */

/** A staging table being made from an upload's body. */
export interface UploadLoad {
  readonly result: Promise<StagedTable>;
  /** The staging table's quoted name. */
  readonly qualified: string;
  /** Stops the load (the client left, or the upload failed elsewhere). */
  abandon(): void;
  /** Drops the committed staging table, unless it became the target. */
  drop(): Promise<void>;
  /** Says that the staging table was renamed over the target. */
  renamed(): void;
}

export interface ReceivedUpload {
  /** The folder of the body's files; the caller removes it with `discardUpload`. */
  dir: string;
  /** Bytes of data stored (the CSV, the NDJSON or the Parquet file). */
  bytes: number;
  /** undefined for a body without data (an empty CSV). */
  load: UploadLoad | undefined;
  /** The error when there was no data. */
  emptyMessage: string;
}

/** Stops an upload's load and removes everything it left: files, staging table. */
export async function discardUpload(received: Pick<ReceivedUpload, 'dir' | 'load'>): Promise<void> {
  const { load } = received;
  if (load) {
    load.abandon();
    if (await load.result.catch(() => undefined)) await load.drop();
  }
  await fs.rm(received.dir, { recursive: true, force: true });
}

export interface StoredUpload {
  tableName: string;
  rowCount: number;
  columns: { name: string; type: string }[];
  widened: Widening[];
  /** The load's steps, for the log (StagedTable.steps). */
  steps: string;
}

/** Private tables need a premium key: checked before a body is read when the options come first. */
export function checkPrivacy(account: Account, options: Pick<UploadOptions, 'isPrivate'>): void {
  if (options.isPrivate && account.plan !== 'premium') {
    throw forbidden('private tables need a premium plan; upload with "is_private": false or upgrade the key');
  }
}

/** Waits for the load; a client that left meanwhile interrupts it. */
async function loaded(load: UploadLoad, gone: AbortSignal | undefined): Promise<StagedTable> {
  const abandon = () => load.abandon();
  gone?.addEventListener('abort', abandon);
  try {
    if (gone?.aborted) abandon();
    return await load.result;
  } catch (error) {
    if (error instanceof InterruptedError && gone?.aborted) throw new ClientGoneError();
    throw error;
  } finally {
    gone?.removeEventListener('abort', abandon);
  }
}

/**
 * Stores a received upload as `<handle>.dataset_<table_name>`, once its load has finished
 * (a dry run stores nothing). `gone` aborts when the client leaves before the answer: the
 * load is interrupted and nothing is stored.
 */
export async function storeUpload(
  database: Database,
  account: Account,
  received: ReceivedUpload,
  options: UploadOptions,
  policy: VersionPolicy,
  gone?: AbortSignal,
): Promise<StoredUpload> {
  checkPrivacy(account, options);
  const { load } = received;
  if (!load) throw badRequest(received.emptyMessage);
  const staged = await loaded(load, gone);
  const namespace = account.handle;
  const tableName = uploadedTableName(options.tableName);
  if (!options.dryRun) {
    const ref = { namespace, tableName };
    await database.write(async (session) => {
      const before = await findTable(session, namespace, tableName);
      // The table replaced is kept whole as its previous version: a rename, no copy.
      const kept = before && policy.kept > 0 ? versionTableName() : undefined;
      if (kept)
        await session.run(
          `ALTER TABLE ${qualifiedName(namespace, tableName)} RENAME TO ${quoteIdentifier(kept)}`,
        );
      else await session.run(`DROP TABLE IF EXISTS ${qualifiedName(namespace, tableName)}`);
      await session.run(`ALTER TABLE ${load.qualified} RENAME TO ${quoteIdentifier(tableName)}`);
      await saveTable(session, {
        ...ref,
        description: options.description,
        isPrivate: options.isPrivate,
        updatedAt: new Date(),
        rowCount: staged.rowCount,
        sizeBytes: received.bytes,
      });
      if (before && kept)
        await recordVersion(session, ref, policy, before, 'replace', { kind: 'snapshot', data: kept });
      else await recordUnversioned(session, ref, before, 'replace');
    });
    load.renamed();
    database.checkpointAfter(staged.rowCount);
  } else {
    // Before the answer: a client that uploads next finds nothing of the dry run left.
    await load.drop();
  }
  return {
    tableName,
    rowCount: staged.rowCount,
    columns: staged.columns,
    widened: staged.widened,
    steps: staged.steps,
  };
}
