import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import { badRequest } from '../errors.js';

/**
 * Streams the JSON body of a CSV upload (`{"data": "...", "table_name": ...}`) and emits
 * the decoded bytes of the `data` string as they arrive, so the CSV reaches disk without
 * the body ever being held whole and without a JavaScript string of the whole CSV.
 * Fields other than `data` are small: their raw JSON text is collected and parsed.
 *
 * The object grammar is a byte-level state machine; the `data` string, which is nearly
 * all of the body, is decoded a piece at a time by the engine's UTF-8 check and
 * JSON.parse, an order of magnitude faster than a byte loop in JavaScript. The body is
 * validated as strictly as JSON.parse would validate it whole.
 */

/** Fields other than `data` are kept as raw JSON text; this bounds them. */
const MAX_OTHER_FIELDS_BYTES = 1_048_576;
const MAX_KEY_BYTES = 1024;
/** Decoded bytes are passed on in batches: one write of 1 MB costs far less than sixteen of 64 KB. */
const BATCH_BYTES = 1 << 20;
/** JSON.parse is fastest on pieces of this size (measured: 64 KB twice as fast as 1 MB). */
const PIECE_BYTES = 1 << 16;

enum State {
  BeforeObject,
  /** After '{': a key, or '}' for an empty object. */
  BeforeKey,
  /** After ',': a key must follow. */
  BeforeKeyAfterComma,
  InKey,
  InKeyEscape,
  AfterKey,
  BeforeValue,
  InData,
  InOtherValue,
  AfterValue,
  AfterObject,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EMPTY = Buffer.alloc(0);

function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function describeByte(byte: number): string {
  return byte >= 0x21 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16)}`;
}

/** Number of consecutive backslashes ending just before `index` (not before `floor`). */
function backslashesBefore(buf: Buffer, index: number, floor: number): number {
  let count = 0;
  for (let i = index - 1; i >= floor && buf[i] === BACKSLASH; i--) count++;
  return count;
}

/** Index of the quote that closes the string begun before `from`, or -1. */
function findClosingQuote(buf: Buffer, from: number): number {
  let at = buf.indexOf(QUOTE, from);
  while (at >= 0 && backslashesBefore(buf, at, from) % 2 === 1) at = buf.indexOf(QUOTE, at + 1);
  return at;
}

function isHexDigit(byte: number | undefined): boolean {
  return (
    byte !== undefined &&
    ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66))
  );
}

/** Start of the escape sequence that begins in the last 6 bytes before `to`, or -1. */
function lastEscapeStart(buf: Buffer, from: number, to: number): number {
  for (let i = to - 1; i >= Math.max(from, to - 6); i--) {
    if (buf[i] === BACKSLASH && backslashesBefore(buf, i, from) % 2 === 0) return i;
  }
  return -1;
}

/**
 * The largest cut <= `to` such that buf[from, cut) ends neither inside an escape sequence,
 * nor inside a UTF-8 sequence, nor just after the high half of a `\uD83D\uDE00` pair.
 */
function safeCut(buf: Buffer, from: number, to: number): number {
  let cut = to;
  // Backing up over an incomplete escape may leave the piece ending in a high surrogate.
  for (;;) {
    const escapeAt = lastEscapeStart(buf, from, cut);
    if (escapeAt < 0) break;
    const isUnicode = buf[escapeAt + 1] === 0x75;
    const incomplete = escapeAt + 1 >= cut || (isUnicode && escapeAt + 6 > cut);
    const dangling = isUnicode && escapeAt + 6 === cut && isHighSurrogateEscape(buf, escapeAt);
    if (!incomplete && !dangling) break;
    cut = escapeAt;
  }
  // A UTF-8 lead byte among the last three bytes whose sequence is not complete.
  for (let i = cut - 1; i >= Math.max(from, cut - 3); i--) {
    const byte = buf[i] as number;
    if (byte < 0x80) break;
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      if (i + length > cut) cut = i;
      break;
    }
  }
  return cut;
}

function isHighSurrogateEscape(buf: Buffer, escapeAt: number): boolean {
  if (!(isHexDigit(buf[escapeAt + 2]) && isHexDigit(buf[escapeAt + 3]))) return false;
  const high = Number.parseInt(buf.toString('latin1', escapeAt + 2, escapeAt + 4), 16);
  return high >= 0xd8 && high <= 0xdb;
}

export interface DecodedUploadBody {
  /** Fields other than `data`, parsed. */
  fields: Map<string, unknown>;
  /** Whether a `data` field was present (it is always a string when present). */
  hasData: boolean;
  /** Bytes of CSV emitted (after JSON unescaping). */
  dataBytes: number;
}

export class UploadBodyDecoder extends Transform {
  private state = State.BeforeObject;
  /** Body offset of the chunk being consumed, for error messages. */
  private offset = 0;
  private keyBytes: number[] = [];
  private currentKey = '';
  private readonly seenKeys = new Set<string>();
  private readonly fields = new Map<string, unknown>();

  /** Raw JSON text of a value other than `data` while it is being collected. */
  private other: number[] = [];
  private otherFieldsBytes = 0;
  private otherDepth = 0;
  private otherInString = false;
  private otherEscape = false;

  /** Bytes of the `data` string held back because they may continue in the next chunk. */
  private carry: Buffer = EMPTY;
  private hasData = false;
  private dataBytes = 0;
  private batch: Buffer[] = [];
  private batchLength = 0;

  /** Set once the whole body has been read and is valid. */
  result: DecodedUploadBody | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.consume(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (this.state !== State.AfterObject) {
      callback(badRequest(`malformed JSON body: unexpected end of the body at byte ${this.offset}`));
      return;
    }
    this.pushBatch();
    this.result = { fields: this.fields, hasData: this.hasData, dataBytes: this.dataBytes };
    callback();
  }

  private malformed(message: string, at: number): never {
    throw badRequest(`malformed JSON body: ${message} at byte ${at}`);
  }

  private consume(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.state === State.InData) {
        i = this.consumeData(chunk, i);
      } else if (this.state === State.InOtherValue) {
        this.collectOther(chunk[i] as number, this.offset + i);
        i++;
      } else {
        this.step(chunk[i] as number, this.offset + i);
        i++;
      }
    }
    this.offset += chunk.length;
  }

  /** Decodes the `data` string from chunk[start]; returns where the object grammar resumes. */
  private consumeData(chunk: Buffer, start: number): number {
    const carried = this.carry.length;
    const work = carried > 0 ? Buffer.concat([this.carry, chunk.subarray(start)]) : chunk;
    const from = carried > 0 ? 0 : start;
    const workOffset = this.offset + start - from - carried;
    this.carry = EMPTY;
    const end = findClosingQuote(work, from);
    if (end >= 0) {
      this.decodeRange(work, from, end, workOffset);
      this.state = State.AfterValue;
      return start + (end - from - carried) + 1;
    }
    const cut = safeCut(work, from, work.length);
    this.decodeRange(work, from, cut, workOffset);
    this.carry = Buffer.from(work.subarray(cut));
    return chunk.length;
  }

  /** Decodes work[from, to), which ends at a safe cut, in pieces of about PIECE_BYTES. */
  private decodeRange(work: Buffer, from: number, to: number, workOffset: number): void {
    let start = from;
    while (to - start > PIECE_BYTES) {
      const cut = safeCut(work, start, start + PIECE_BYTES);
      this.decodePiece(work, start, cut, workOffset);
      start = cut;
    }
    this.decodePiece(work, start, to, workOffset);
  }

  private decodePiece(work: Buffer, from: number, to: number, workOffset: number): void {
    if (to <= from) return;
    const piece = work.subarray(from, to);
    if (!isUtf8(piece)) {
      throw badRequest(`the "data" string is not valid UTF-8 (near byte ${workOffset + from} of the body)`);
    }
    const text = piece.toString('utf8');
    let decoded: string;
    try {
      decoded = JSON.parse(`"${text}"`) as string;
    } catch {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly those
      const control = /[\u0000-\u001f]/.exec(text);
      if (control) {
        this.malformed(
          'raw control character inside the "data" string (a newline must be written as \\n)',
          workOffset + from + Buffer.byteLength(text.slice(0, control.index)),
        );
      }
      this.malformed('invalid escape sequence in the "data" string', workOffset + from);
    }
    if (!decoded.isWellFormed()) {
      throw badRequest(
        `the "data" string holds an unpaired UTF-16 surrogate escape (near byte ${workOffset + from} of the body)`,
      );
    }
    this.emitData(Buffer.from(decoded, 'utf8'));
  }

  private emitData(bytes: Buffer): void {
    this.dataBytes += bytes.length;
    this.batch.push(bytes);
    this.batchLength += bytes.length;
    if (this.batchLength >= BATCH_BYTES) this.pushBatch();
  }

  private pushBatch(): void {
    if (this.batchLength === 0) return;
    this.push(this.batch.length === 1 ? this.batch[0] : Buffer.concat(this.batch, this.batchLength));
    this.batch = [];
    this.batchLength = 0;
  }

  private step(byte: number, at: number): void {
    switch (this.state) {
      case State.BeforeObject:
        if (isJsonWhitespace(byte)) return;
        if (byte !== 0x7b) this.malformed(`expected '{' but found ${describeByte(byte)}`, at);
        this.state = State.BeforeKey;
        return;
      case State.BeforeKey:
      case State.BeforeKeyAfterComma:
        if (isJsonWhitespace(byte)) return;
        if (byte === 0x7d && this.state === State.BeforeKey) {
          this.state = State.AfterObject;
          return;
        }
        if (byte !== QUOTE) this.malformed(`expected a field name but found ${describeByte(byte)}`, at);
        this.keyBytes = [QUOTE];
        this.state = State.InKey;
        return;
      case State.InKey:
        this.keyBytes.push(byte);
        if (this.keyBytes.length > MAX_KEY_BYTES) this.malformed('field name too long', at);
        if (byte === BACKSLASH) this.state = State.InKeyEscape;
        else if (byte === QUOTE) this.finishKey(at);
        return;
      case State.InKeyEscape:
        this.keyBytes.push(byte);
        this.state = State.InKey;
        return;
      case State.AfterKey:
        if (isJsonWhitespace(byte)) return;
        if (byte !== 0x3a) this.malformed(`expected ':' but found ${describeByte(byte)}`, at);
        this.state = State.BeforeValue;
        return;
      case State.BeforeValue:
        if (isJsonWhitespace(byte)) return;
        this.startValue(byte, at);
        return;
      case State.AfterValue:
        if (isJsonWhitespace(byte)) return;
        if (byte === 0x2c) this.state = State.BeforeKeyAfterComma;
        else if (byte === 0x7d) this.state = State.AfterObject;
        else this.malformed(`expected ',' or '}' but found ${describeByte(byte)}`, at);
        return;
      case State.AfterObject:
        if (!isJsonWhitespace(byte))
          this.malformed(`unexpected ${describeByte(byte)} after the JSON object`, at);
        return;
      case State.InData:
      case State.InOtherValue:
        throw new Error('the value states are consumed elsewhere');
    }
  }

  private finishKey(at: number): void {
    const raw = Buffer.from(this.keyBytes);
    let key: string;
    try {
      if (!isUtf8(raw)) throw new Error('invalid UTF-8');
      key = JSON.parse(raw.toString('utf8')) as string;
    } catch {
      this.malformed('invalid field name', at);
    }
    if (this.seenKeys.has(key)) throw badRequest(`field "${key}" appears twice in the JSON body`);
    this.seenKeys.add(key);
    this.currentKey = key;
    this.state = State.AfterKey;
  }

  private startValue(byte: number, at: number): void {
    if (this.currentKey === 'data') {
      if (byte !== QUOTE) throw badRequest('field "data" must be a string holding the CSV text');
      this.hasData = true;
      this.state = State.InData;
      return;
    }
    this.other = [];
    this.otherDepth = 0;
    this.otherInString = false;
    this.otherEscape = false;
    this.state = State.InOtherValue;
    this.collectOther(byte, at);
  }

  /**
   * Collects the raw text of a value other than `data`. A number or literal ends at the
   * first delimiter, which is then handed back to the object grammar.
   */
  private collectOther(byte: number, at: number): void {
    if (this.otherInString) {
      this.pushOther(byte, at);
      if (this.otherEscape) this.otherEscape = false;
      else if (byte === BACKSLASH) this.otherEscape = true;
      else if (byte === QUOTE) {
        this.otherInString = false;
        if (this.otherDepth === 0) this.finishOther(at);
      }
      return;
    }
    if (byte === QUOTE) {
      this.otherInString = true;
      this.pushOther(byte, at);
    } else if (byte === 0x7b || byte === 0x5b) {
      this.otherDepth++;
      this.pushOther(byte, at);
    } else if ((byte === 0x7d || byte === 0x5d) && this.otherDepth > 0) {
      this.otherDepth--;
      this.pushOther(byte, at);
      if (this.otherDepth === 0) this.finishOther(at);
    } else if (this.otherDepth === 0 && (byte === 0x2c || byte === 0x7d || isJsonWhitespace(byte))) {
      this.finishOther(at);
      this.step(byte, at);
    } else {
      this.pushOther(byte, at);
    }
  }

  private pushOther(byte: number, at: number): void {
    this.other.push(byte);
    if (++this.otherFieldsBytes > MAX_OTHER_FIELDS_BYTES) {
      this.malformed('the fields other than "data" are too large', at);
    }
  }

  private finishOther(at: number): void {
    const raw = Buffer.from(this.other);
    if (!isUtf8(raw)) throw badRequest(`field "${this.currentKey}" is not valid UTF-8`);
    try {
      this.fields.set(this.currentKey, JSON.parse(raw.toString('utf8')));
    } catch {
      this.malformed(`invalid value for field "${this.currentKey}"`, at);
    }
    this.state = State.AfterValue;
  }
}
