import type { Readable, Transform } from 'node:stream';
import { ulid } from 'ulid';
import { badRequest } from '../errors.js';
import type { Database } from '../storage/database.js';
import { receiveInto } from './body-to-file.js';
import type { LineEnd } from './csv-dialect.js';
import { type PartFeed, StagedLoad, type TypingOptions } from './csv-loader.js';
import { UploadBodyDecoder } from './upload-body-decoder.js';
import { pinnedTypes, type UploadOptions, uploadOptionsFromFields } from './upload-options.js';
import { partsFolder, type UploadPart, UploadParts } from './upload-parts.js';
import { discardUpload, type ReceivedUpload } from './upload-store.js';

/**
 * Receiving a CSV upload (spec §4.1), in the JSON form or as the CSV itself (`text/csv`).
 * The body streams (through the JSON decoder for the JSON form) into parts on disk
 * (upload-parts.ts); the first part gives the column types, and the parts are loaded into a
 * staging table in statements of about 32 MB as they are written (csv-loader.ts), so the load
 * runs while the rest arrives. upload-store.ts then renames the staging table over the target.
 */

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

/** A promise settled from outside, for options that arrive with (or after) the data. */
function deferred<T>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Settled with an error when the upload fails; whoever still waits hears of it.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export interface ReceivedCsvUpload extends ReceivedUpload {
  options: UploadOptions;
  /** Bytes of CSV, as decoded (JSON form) or sent. */
  dataBytes: number;
}

/**
 * Receives a CSV upload's body: decodes it (JSON form) to CSV parts on disk and starts loading
 * them into a staging table of `namespace` as they come. `options` are the query's for a
 * body that is the CSV itself, undefined for the JSON form, whose fields carry them. The body
 * stream itself is never destroyed here: after an early error the HTTP layer still has to
 * answer on its connection.
 */
export async function receiveCsvUpload(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  database: Database,
  namespace: string,
  options: UploadOptions | undefined,
): Promise<ReceivedCsvUpload> {
  const id = ulid();
  const dir = await partsFolder(tmpDir, id);
  const decoder = options ? undefined : new UploadBodyDecoder();
  const parts = new UploadParts(dir);
  const queue = new PartQueue(() => parts.lineEnd);
  const known = deferred<UploadOptions>();
  if (options) known.resolve(options);
  let load: StagedLoad | undefined;
  parts.events.on('part', (part) => {
    queue.push(part);
    if (load || !parts.columns) return;
    const columns = parts.columns;
    const typing: Promise<TypingOptions> = known.promise.then((o) => ({
      pinned: pinnedTypes(o.types, columns),
      strict: o.strict,
    }));
    const target = { namespace, jobId: id, columnNames: columns, format: 'csv' as const };
    load = new StagedLoad(database, target, queue, typing, (error) => parts.stop(error));
  });
  let dataBytes: number;
  try {
    const transforms: Transform[] = decoder ? [decoder] : [];
    dataBytes = await receiveInto(body, maxBytes, [...transforms, parts]);
    queue.end();
  } catch (error) {
    queue.fail(error as Error);
    known.reject(error);
    await discardUpload({ dir, load });
    throw error;
  }
  try {
    const settled = options ?? fromJsonBody(decoder as UploadBodyDecoder);
    known.resolve(settled);
    return {
      dir,
      bytes: parts.bytes,
      load,
      emptyMessage: `${options ? 'the body' : 'field "data"'} is empty: it must hold a CSV with a header line`,
      options: settled,
      dataBytes: decoder?.result?.dataBytes ?? dataBytes,
    };
  } catch (error) {
    known.reject(error);
    await discardUpload({ dir, load });
    throw error;
  }
}

function fromJsonBody(decoder: UploadBodyDecoder): UploadOptions {
  const decoded = decoder.result;
  if (!decoded) throw badRequest('malformed JSON body: the body ended early');
  if (!decoded.hasData) throw badRequest('field "data" is required: the CSV text, header line first');
  return uploadOptionsFromFields(decoded.fields);
}
