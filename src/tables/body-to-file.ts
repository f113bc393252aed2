import fs from 'node:fs/promises';
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../errors.js';

/**
 * Streams a request body to a temporary file through a byte limit and any transforms, so a
 * body is never held whole in memory. The body stream itself is never destroyed here: after
 * an early error the HTTP layer still has to answer on its connection.
 */

export function payloadTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `the request body must be smaller than ${maxBytes} bytes; split the data and append it with the insert operation`,
  );
}

/** The client closed the connection before sending the whole body. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
  constructor() {
    super('the client closed the connection before sending the whole body');
  }
}

/** Counts bytes and fails once `maxBytes` have passed: a body must be smaller than that. */
class ByteLimit extends Transform {
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

export async function discard(file: string): Promise<void> {
  await fs.rm(file, { force: true });
}

/**
 * Streams `body` through the byte limit and `streams` (transforms, then a sink); returns the
 * body's size. A client that leaves makes it fail with ClientGoneError.
 */
export async function receiveInto(
  body: Readable,
  maxBytes: number,
  streams: readonly [...Transform[], Writable],
): Promise<number> {
  const limit = new ByteLimit(maxBytes);
  const abandon = () => {
    if (!body.readableEnded) limit.destroy(new ClientGoneError());
  };
  body.once('close', abandon);
  body.once('error', abandon);
  body.pipe(limit);
  // Gone before this was called: its 'close' has passed. The error is emitted on the next
  // tick, after pipeline() below has started listening.
  if (body.destroyed) abandon();
  try {
    await pipeline([limit, ...streams]);
    return limit.seen;
  } catch (error) {
    body.unpipe(limit);
    throw error;
  } finally {
    body.off('close', abandon);
    body.off('error', abandon);
  }
}

/** Writes `body` to `file` through `transforms`; returns the body's size. Removes the file on failure. */
export async function bodyToFile(
  body: Readable,
  file: string,
  maxBytes: number,
  transforms: readonly Transform[] = [],
): Promise<number> {
  // The file is opened before anything is piped: an error on the byte limit (the client
  // leaving) while nothing listens to it yet would be an uncaught exception, ending the process.
  const sink = await fs.open(file, 'w');
  try {
    return await receiveInto(body, maxBytes, [...transforms, sink.createWriteStream()]);
  } catch (error) {
    await discard(file);
    throw error;
  }
}
