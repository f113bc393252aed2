import fs from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ulid } from 'ulid';
import { ClientGoneError, discard, payloadTooLarge } from './upload-csv.js';

/**
 * Streams a raw request body (an insert's CSV or NDJSON) to a temporary file, so DuckDB's
 * reader can take it from disk and the body is never held whole in memory.
 */

export interface ReceivedBody {
  /** The caller removes it with `discard`. */
  file: string;
  /** Bytes of the body as sent. */
  bytes: number;
}

/** Counts bytes and fails once `maxBytes` have passed: a body must be smaller than that. */
class ByteCounter extends Transform {
  seen = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen >= this.maxBytes) callback(payloadTooLarge(this.maxBytes));
    else callback(null, chunk);
  }
}

/**
 * Drops carriage returns. In NDJSON a raw CR can only be whitespace between tokens (inside
 * a string it must be escaped), so this changes no value, and it spares DuckDB's line
 * reader a file that mixes CRLF and LF line ends, which it refuses.
 */
class DropCarriageReturns extends Transform {
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let at = chunk.indexOf(0x0d);
    if (at < 0) {
      callback(null, chunk);
      return;
    }
    const kept = Buffer.allocUnsafe(chunk.length);
    let length = 0;
    let from = 0;
    while (at >= 0) {
      length += chunk.copy(kept, length, from, at);
      from = at + 1;
      at = chunk.indexOf(0x0d, from);
    }
    length += chunk.copy(kept, length, from);
    callback(null, kept.subarray(0, length));
  }
}

export async function receiveBody(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  options: { dropCarriageReturns: boolean },
): Promise<ReceivedBody> {
  await fs.mkdir(tmpDir, { recursive: true });
  const file = path.join(tmpDir, `insert-${ulid()}`);
  const counter = new ByteCounter(maxBytes);
  // The body stream itself is never destroyed here: after an early error the HTTP layer
  // still has to answer on its connection.
  const abandon = () => {
    if (!body.readableEnded) counter.destroy(new ClientGoneError());
  };
  body.once('close', abandon);
  body.once('error', abandon);
  body.pipe(counter);
  try {
    const sink = await fs.open(file, 'w');
    const destination = sink.createWriteStream();
    if (options.dropCarriageReturns) await pipeline(counter, new DropCarriageReturns(), destination);
    else await pipeline(counter, destination);
    return { file, bytes: counter.seen };
  } catch (error) {
    body.unpipe(counter);
    await discard(file);
    throw error;
  } finally {
    body.off('close', abandon);
    body.off('error', abandon);
  }
}
