/** Where a writer's bytes go: a socket (net or TLS), or memory (a kept answer, simple-query.ts). */
export interface WireSink {
  write(bytes: Buffer): boolean;
  readonly writableLength: number;
  readonly destroyed: boolean;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** A sink that keeps what is written, in order. */
export function memorySink(): WireSink & { bytes(): Buffer } {
  const parts: Buffer[] = [];
  return {
    write: (bytes) => parts.push(bytes) > 0,
    writableLength: 0,
    destroyed: false,
    on: () => undefined,
    off: () => undefined,
    bytes: () => Buffer.concat(parts),
  };
}

/**
 * What the server sends: messages written into one buffer and handed to the socket in
 * blocks, so that a result of many rows costs a few large writes and not one per row. The
 * row encoder writes into `buffer` at `position` itself (row-encoding.ts).
 */

/** Bytes gathered before they go to the socket. */
const BLOCK_BYTES = 64 * 1024;
/** Past this many bytes queued in the socket, whoever writes waits for the client to read. */
const HIGH_WATER_BYTES = 1024 * 1024;

/** The client read nothing for the stall limit while bytes waited for it. */
export class ClientStalled extends Error {
  override name = 'ClientStalled';
}

/** The connection closed while an answer was being written. */
export class ClientGone extends Error {
  override name = 'ClientGone';
}

export class BackendWriter {
  buffer = Buffer.allocUnsafe(BLOCK_BYTES);
  position = 0;
  /** Where the message being written starts, or -1. */
  private messageStart = -1;

  constructor(
    private readonly socket: WireSink,
    private readonly stallMs: number,
  ) {}

  /** Room for `bytes` more at `position`; a full block goes to the socket first. */
  ensure(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const open = this.messageStart >= 0 ? this.messageStart : this.position;
    const carried = this.position - open;
    const next = Buffer.allocUnsafe(Math.max(BLOCK_BYTES, carried + bytes));
    this.buffer.copy(next, 0, open, this.position);
    if (open > 0) this.send(this.buffer.subarray(0, open));
    this.buffer = next;
    this.position = carried;
    if (this.messageStart >= 0) this.messageStart = 0;
  }

  begin(type: number): void {
    this.ensure(5);
    this.messageStart = this.position;
    this.buffer[this.position] = type;
    this.position += 5;
  }

  end(): void {
    const length = this.position - this.messageStart - 1;
    const at = this.messageStart + 1;
    const buffer = this.buffer;
    buffer[at] = length >>> 24;
    buffer[at + 1] = (length >>> 16) & 0xff;
    buffer[at + 2] = (length >>> 8) & 0xff;
    buffer[at + 3] = length & 0xff;
    this.messageStart = -1;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buffer[this.position++] = value;
  }

  int16(value: number): void {
    this.ensure(2);
    this.buffer.writeInt16BE(value, this.position);
    this.position += 2;
  }

  int32(value: number): void {
    this.ensure(4);
    this.buffer.writeInt32BE(value, this.position);
    this.position += 4;
  }

  /** A string, UTF-8, NUL-terminated (a NUL inside is dropped: the protocol cannot carry it). */
  cstring(text: string): void {
    const clean = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
    this.ensure(Buffer.byteLength(clean) + 1);
    this.position += this.buffer.write(clean, this.position);
    this.buffer[this.position++] = 0;
  }

  bytes(value: Uint8Array): void {
    this.ensure(value.length);
    this.buffer.set(value, this.position);
    this.position += value.length;
  }

  /** Sends what is gathered (whole messages only). */
  flush(): void {
    if (this.messageStart >= 0) throw new Error('flush inside a message');
    if (this.position === 0) return;
    this.send(this.buffer.subarray(0, this.position));
    this.buffer = Buffer.allocUnsafe(BLOCK_BYTES);
    this.position = 0;
  }

  /** Flushes, then waits while the socket holds more than it should; throws when the client stalls or left. */
  async drain(): Promise<void> {
    this.flush();
    if (this.socket.destroyed) throw new ClientGone('the client closed the connection');
    if (this.socket.writableLength <= HIGH_WATER_BYTES) return;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.socket.off('drain', onDrain);
        this.socket.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = () => done();
      const onClose = () => done(new ClientGone('the client closed the connection'));
      const timer = setTimeout(
        () => done(new ClientStalled(`the client read nothing for ${this.stallMs / 1000} s`)),
        this.stallMs,
      );
      this.socket.on('drain', onDrain);
      this.socket.on('close', onClose);
    });
  }

  private send(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }
}

const code = (letter: string) => letter.charCodeAt(0);

export const MESSAGE = {
  authentication: code('R'),
  parameterStatus: code('S'),
  backendKeyData: code('K'),
  readyForQuery: code('Z'),
  rowDescription: code('T'),
  dataRow: code('D'),
  commandComplete: code('C'),
  emptyQuery: code('I'),
  error: code('E'),
  notice: code('N'),
  parseComplete: code('1'),
  bindComplete: code('2'),
  closeComplete: code('3'),
  noData: code('n'),
  parameterDescription: code('t'),
  portalSuspended: code('s'),
} as const;

export type TransactionStatus = 'I' | 'T' | 'E';

export function authenticationRequest(w: BackendWriter, kind: number, extra?: Uint8Array): void {
  w.begin(MESSAGE.authentication);
  w.int32(kind);
  if (extra) w.bytes(extra);
  w.end();
}

export function parameterStatus(w: BackendWriter, name: string, value: string): void {
  w.begin(MESSAGE.parameterStatus);
  w.cstring(name);
  w.cstring(value);
  w.end();
}

export function backendKeyData(w: BackendWriter, processId: number, secret: number): void {
  w.begin(MESSAGE.backendKeyData);
  w.int32(processId);
  w.int32(secret);
  w.end();
}

export function readyForQuery(w: BackendWriter, status: TransactionStatus): void {
  w.begin(MESSAGE.readyForQuery);
  w.byte(code(status));
  w.end();
}

export function commandComplete(w: BackendWriter, tag: string): void {
  w.begin(MESSAGE.commandComplete);
  w.cstring(tag);
  w.end();
}

/** A message of no fields: EmptyQueryResponse, ParseComplete, BindComplete, CloseComplete, NoData, PortalSuspended. */
export function emptyMessage(w: BackendWriter, type: number): void {
  w.begin(type);
  w.end();
}

export interface FieldDescription {
  name: string;
  /** The column's type OID (pg-types.ts). */
  typeOid: number;
  typeLength: number;
  typeModifier: number;
  /** 0 text, 1 binary. */
  format: number;
}

export function rowDescription(w: BackendWriter, fields: readonly FieldDescription[]): void {
  w.begin(MESSAGE.rowDescription);
  w.int16(fields.length);
  for (const field of fields) {
    w.cstring(field.name);
    w.int32(0); // no table
    w.int16(0); // no column of a table
    w.int32(field.typeOid);
    w.int16(field.typeLength);
    w.int32(field.typeModifier);
    w.int16(field.format);
  }
  w.end();
}

export function parameterDescription(w: BackendWriter, typeOids: readonly number[]): void {
  w.begin(MESSAGE.parameterDescription);
  w.int16(typeOids.length);
  for (const oid of typeOids) w.int32(oid);
  w.end();
}

/** The fields of an ErrorResponse or NoticeResponse. */
export interface ErrorFields {
  severity: 'ERROR' | 'FATAL' | 'WARNING' | 'NOTICE';
  /** SQLSTATE, e.g. 42601. */
  code: string;
  message: string;
  detail?: string;
  hint?: string;
  /** 1-based position in the query string, in characters. */
  position?: number;
}

export function errorResponse(w: BackendWriter, fields: ErrorFields, type: number = MESSAGE.error): void {
  w.begin(type);
  w.byte(code('S'));
  w.cstring(fields.severity);
  w.byte(code('V'));
  w.cstring(fields.severity);
  w.byte(code('C'));
  w.cstring(fields.code);
  w.byte(code('M'));
  w.cstring(fields.message);
  if (fields.detail !== undefined) {
    w.byte(code('D'));
    w.cstring(fields.detail);
  }
  if (fields.hint !== undefined) {
    w.byte(code('H'));
    w.cstring(fields.hint);
  }
  if (fields.position !== undefined) {
    w.byte(code('P'));
    w.cstring(String(fields.position));
  }
  w.byte(0);
  w.end();
}
