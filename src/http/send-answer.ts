import fs from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { FileBody, PartsBody, RowsBeingWritten } from '../results/page-body.js';
import type { Answer } from '../results/results.js';
import { untilGrown, watchWritten } from '../results/rows-file.js';

/**
 * Sends a results answer (results/page-body.ts): bytes in memory in one write, framed by their
 * length; a large page's rows from the files DuckDB wrote (part after part, as they are
 * written, for a long range), between the bytes before and after them, each file removed
 * once sent, or when the client goes away.
 *
 * The files are read into two buffers kept for the whole answer, one filling while the
 * other is written to the socket. Measured (bench/whole-results.ts): reading with
 * `fs.createReadStream` allocated a new buffer per read, and the garbage collector then
 * took 30% of the main thread's time (700 ms over 550 MB of pages).
 */

/**
 * Read buffers kept from one answer to the next. Two new 1 MiB buffers per large page were
 * still 50 MB of memory outside V8's heap per walk through a million rows, and V8 answers such
 * memory with full collections, each marking the service's whole heap: the garbage collector
 * took 15.8% of the main thread in a profile of four walks (308 ms).
 */
const spareBuffers: Buffer[] = [];
const SPARE_BUFFERS = 8;

/** Reads of 1 MiB: a 100 MB CSV goes out in 100 writes instead of 1,600 of 64 KiB. */
const READ_BYTES = 1 << 20;

/**
 * A client that reads nothing for this long is let go: its connection closed, its files
 * removed. Without it a client that stops reading would hold its files and two buffers
 * forever.
 */
const STALLED_MS = 60_000;

class FileSender {
  private readonly buffers = [takeBuffer(), takeBuffer()];
  private writing: Promise<void> = Promise.resolve();
  private turn = 0;
  /**
   * Settles when the connection closes. Node drops the callback of a write or `end` made
   * while the socket is being destroyed, so each is raced against this, or it could wait
   * forever (and the files never be removed).
   */
  readonly closed: Promise<void>;

  constructor(
    private readonly out: Writable,
    private readonly stalledMs: number,
  ) {
    this.closed = new Promise((resolve) => {
      if (out.closed || out.destroyed) resolve();
      else out.once('close', () => resolve());
    });
  }

  /** Writes `chunk`, resolving once the socket has taken it (so its buffer may be reused). */
  private write(chunk: Buffer): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const taken = new Promise<void>((resolve, reject) => {
      this.out.write(chunk, (error) => (error ? reject(error) : resolve()));
      timer = setTimeout(() => reject(new Error('the client stopped reading')), this.stalledMs);
    });
    const gone = this.closed.then(() => {
      throw new Error('the client went away');
    });
    return Promise.race([taken, gone]).finally(() => clearTimeout(timer));
  }

  /** Queues `chunk` after what is being written; a failed write fails the next send or flushed(). */
  async send(chunk: Buffer): Promise<void> {
    await this.writing;
    if (this.out.destroyed) throw new Error('the client went away');
    this.writing = this.write(chunk);
    // Handled here so that it is not reported as unhandled while the next file read runs.
    this.writing.catch(() => undefined);
  }

  /** The first `rows.rowsBytes` bytes of the files, in order. */
  async sendFiles(rows: FileBody): Promise<void> {
    let left = rows.rowsBytes;
    for (const file of rows.files) {
      if (left <= 0) break;
      const end = Math.min(file.size, left);
      left -= end;
      await this.sendFile(file.path, () => ({ end }), 0);
    }
  }

  /**
   * The rows of a file DuckDB is writing, as they come: what the file holds is sent (less
   * the last `trailing` bytes, which may be the rows' end), then, once nothing is left, the
   * file is looked at again every 2 ms (untilGrown) until DuckDB says it is done and how long
   * it is. Polled, not watched: DuckDB writes a part in thousands of writes, each of which
   * would be an inotify event; a look that finds nothing new costs one read. Returns the
   * bytes sent.
   */
  async sendGrowing(rows: RowsBeingWritten): Promise<number> {
    const state = watchWritten(rows);
    await rows.created;
    return this.sendFile(
      rows.path,
      () => ({ end: state.written?.rowsBytes, failed: state.failed }),
      rows.trailing,
    );
  }

  /**
   * A file's first `end` bytes, read into the two buffers in turn. While `end` is not known
   * yet (the file still grows), the last `holdBack` bytes read wait for the next read.
   */
  private async sendFile(
    file: string,
    known: () => { end?: number; failed?: { error: unknown } },
    holdBack: number,
  ): Promise<number> {
    const handle = await fs.open(file, 'r');
    try {
      let position = 0;
      for (;;) {
        const { end, failed } = known();
        if (failed) throw failed.error;
        if (end !== undefined && position >= end) return position;
        // This buffer's previous write ended before the `await this.writing` in send().
        const buffer = this.buffers[this.turn % 2] as Buffer;
        const length = Math.min(READ_BYTES, (end ?? Number.POSITIVE_INFINITY) - position);
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        const usable = end === undefined ? bytesRead - holdBack : bytesRead;
        if (usable > 0) {
          this.turn++;
          position += usable;
          await this.send(buffer.subarray(0, usable));
        } else if (end !== undefined) {
          throw new Error(`${file} ended before its ${end} bytes`);
        } else {
          await untilGrown();
        }
      }
    } finally {
      await handle.close();
    }
  }

  async flushed(): Promise<void> {
    await this.writing;
  }

  /**
   * The buffers go back for the next answer, once every write of this one has been taken by
   * the socket. After a failed answer they are left to the collector: a write the socket
   * still holds could otherwise send another answer's bytes.
   */
  release(): void {
    for (const buffer of this.buffers) if (spareBuffers.length < SPARE_BUFFERS) spareBuffers.push(buffer);
  }
}

function takeBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafeSlow(READ_BYTES);
}

/** Sends every part in order, each while it is written, with the separator between; the rows' bytes. */
async function sendParts(sender: FileSender, body: PartsBody): Promise<number> {
  const { parts, separator } = body;
  let bytes = 0;
  for (let i = 0; i < parts.count; i++) {
    const part = parts.part(i);
    try {
      // Every part holds a row: a range of a snapshot's row ids, which are 0, 1, … .
      if (bytes > 0 && separator.length > 0) {
        await sender.send(separator);
        bytes += separator.length;
      }
      bytes += await sender.sendGrowing(part);
    } finally {
      // Once written: the socket may still hold the last buffer, not the file.
      await part.written.then(
        (file) => file.discard(),
        () => undefined,
      );
    }
  }
  return bytes;
}

/** A large body's bytes: the head, the rows from their files, the tail. */
async function sendRows(out: Writable, body: FileBody | PartsBody, stalledMs: number): Promise<void> {
  const sender = new FileSender(out, stalledMs);
  if (body.head.length > 0) await sender.send(body.head);
  let tail: Buffer | string;
  if (body.kind === 'parts') tail = body.tail(await sendParts(sender, body));
  else {
    await sender.sendFiles(body);
    tail = body.tail;
  }
  await sender.flushed();
  sender.release();
  const ended = new Promise<void>((resolve) => out.end(tail, resolve));
  await Promise.race([ended, sender.closed]);
}

const SENT = Promise.resolve();

/**
 * Writes an answer: its status, its headers with the Content-Length when the body's size is
 * known before it is sent, then its body. Settles once a large body is sent, or given up;
 * never rejects then: a client that goes away mid-page, or stops reading for a minute, gets
 * its connection closed, and the body's files are removed either way.
 */
export function sendAnswer(
  res: ServerResponse,
  answer: Answer,
  /** How long a client may read nothing (tests shorten it). */
  stalledMs = STALLED_MS,
): Promise<void> {
  const { body } = answer;
  if (body.kind !== 'bytes') return sendLarge(res, answer, body, stalledMs);
  // Ready bytes (the answer cache's, sent again and again): one writeHead, one write.
  res.writeHead(answer.status, {
    'Content-Type': answer.contentType,
    'Content-Length': body.size,
    ...answer.headers,
  });
  res.end(body.bytes);
  return SENT;
}

async function sendLarge(
  res: ServerResponse,
  answer: Answer,
  body: FileBody | PartsBody,
  stalledMs: number,
): Promise<void> {
  try {
    const length = body.size === undefined ? {} : { 'Content-Length': body.size };
    res.writeHead(answer.status, { 'Content-Type': answer.contentType, ...length, ...answer.headers });
    await sendRows(res, body, stalledMs);
  } catch {
    res.destroy();
  } finally {
    await body.discard();
  }
}
