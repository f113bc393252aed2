import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { Database } from '../../src/storage/database.js';
import { CsvReadError } from '../../src/storage/storage-error.js';
import { type CsvPart, csvField, type LineEnd, readCsv } from '../../src/tables/csv-dialect.js';
import { CsvRecordScanner } from '../../src/tables/csv-record-scanner.js';
import { lineOfCsvRecord } from '../../src/tables/file-lines.js';
import { tempDir } from '../support/service.js';

/**
 * The record scanner follows DuckDB's reader: where it finds a record boundary, a body cut
 * there and read as parts (each part after the first with a copy of the header) reads as the
 * whole does, which the upload relies on to load parts while the rest arrives. Checked
 * against a real DuckDB on generated bodies full of quotes, commas, spaces and line ends.
 */

let database: Database;
let dir: string;
let files = 0;

beforeAll(async () => {
  database = await Database.open({ path: ':memory:', catalogReaders: 1, resultReaders: 1 });
  dir = tempDir('record-scanner-');
});
afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(bytes: Buffer | string): string {
  const file = path.join(dir, `f${++files}.csv`);
  fs.writeFileSync(file, bytes);
  return file;
}

/** Scans `body` in pieces of `step` bytes; returns the scanner, or the error it threw, and the cut points seen. */
function scan(body: Buffer, step: number, maxRecordBytes?: number) {
  const scanner = new CsvRecordScanner({ format: 'csv', ...(maxRecordBytes ? { maxRecordBytes } : {}) });
  const cuts = new Set<number>();
  try {
    for (let at = 0; at < body.length; at += step) {
      scanner.scan(body.subarray(at, at + step));
      if (scanner.lastCut > 0) cuts.add(scanner.lastCut);
    }
    scanner.end();
    return { scanner, cuts: [...cuts] };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { error, cuts: [] };
  }
}

type Read = { rows: (string | null)[][] } | { problem: string };

async function read(parts: CsvPart[], fieldCount: number, lineEnd: LineEnd): Promise<Read> {
  const fields = Array.from({ length: fieldCount }, (_, i) => csvField(i));
  try {
    const result = await database.read((s) =>
      s.query(`SELECT ${fields.join(', ')} FROM ${readCsv({ parts, fieldCount, lineEnd })}`),
    );
    return { rows: result.rows as (string | null)[][] };
  } catch (error) {
    if (error instanceof CsvReadError) return { problem: error.problem };
    throw error;
  }
}

/** As the upload writes parts: trailing line ends dropped, a header copy before each later part. */
function partsOf(body: Buffer, cut: number | undefined, header: Buffer, lineEnd: LineEnd): CsvPart[] {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x0a || body[end - 1] === 0x0d)) end--;
  const trimmed = body.subarray(0, end);
  if (cut === undefined || cut >= end) return [{ file: write(trimmed), firstLine: 2 }];
  const copy = Buffer.concat([header, Buffer.from(lineEnd === 'crlf' ? '\r\n' : '\n')]);
  return [
    { file: write(trimmed.subarray(0, cut)), firstLine: 2 },
    { file: write(Buffer.concat([copy, trimmed.subarray(cut)])), firstLine: 0 },
  ];
}

/** Pieces of a body; `NL` is the body's line end, and a stray carriage return is rare. */
const piece = fc.oneof(
  { weight: 30, arbitrary: fc.constantFrom('a', 'b', ' ', ',', '"', '""', 'NL', 'é', '"x"', ', "y" ') },
  { weight: 1, arbitrary: fc.constantFrom('\r', '\r\n', '\n') },
);

describe('CsvRecordScanner against DuckDB', () => {
  it('cuts only where parts read as the whole body does, and leaves no structural error to DuckDB', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(piece, { maxLength: 40 }),
        fc.integer({ min: 1, max: 7 }),
        fc.boolean(),
        async (fieldCount, pieces, step, crlf) => {
          const header = Buffer.from(Array.from({ length: fieldCount }, (_, i) => `h${i}`).join(','));
          const end = crlf ? '\r\n' : '\n';
          const body = Buffer.concat([
            header,
            Buffer.from(end),
            Buffer.from(pieces.join('').replaceAll('NL', end)),
          ]);
          const scanned = scan(body, step);
          if (!scanned.scanner) return;
          const lineEnd = scanned.scanner.lineEnd ?? 'lf';
          const whole = await read(partsOf(body, undefined, header, lineEnd), fieldCount, lineEnd);
          // What the scanner lets through, DuckDB reads, or refuses for its field counts only.
          if ('problem' in whole) expect(['field-count', 'unreadable']).toContain(whole.problem);
          for (const cut of scanned.cuts) {
            const parts = await read(partsOf(body, cut, header, lineEnd), fieldCount, lineEnd);
            if ('rows' in whole)
              expect(parts, `cut at ${cut} of ${JSON.stringify(body.toString())}`).toEqual(whole);
            else expect('problem' in parts, `cut at ${cut} of ${JSON.stringify(body.toString())}`).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  // DuckDB fails on some of these with no line ("state machine reached an invalid state"),
  // and reads the others into wrong values (a CR kept in a value, a header swallowed).
  const refused: [string, string, RegExp, 'duckdb fails' | 'duckdb misreads'][] = [
    [
      'a carriage return inside an unquoted value',
      'a,b\n1,x\ry\n3,4\n',
      /CSV line 2 holds a carriage return/,
      'duckdb fails',
    ],
    [
      'a carriage return alone as a line end',
      'a,b\r1,2\r',
      /CSV line 1 \(the header\) holds a carriage return/,
      'duckdb misreads',
    ],
    [
      'CR LF, then LF',
      'a,b\r\n1,2\r\n3,4\n5,6\n',
      /CSV line 3 ends with a line feed alone .* but line 1 ends with CR LF/,
      'duckdb fails',
    ],
    [
      'LF, then CR LF',
      'a,b\n1,2\r\n',
      /CSV line 2 ends with CR LF .* but line 1 ends with a line feed alone/,
      'duckdb misreads',
    ],
    [
      'text after a closing quote',
      'a,b\n1,"x"y\n',
      /CSV line 2: text follows the closing quote/,
      'duckdb fails',
    ],
    [
      'a quoted value never closed',
      'a,b\n1,2\n3,"x\n\n',
      /CSV line 3: a quoted value is not closed/,
      'duckdb fails',
    ],
    [
      'a quoted header name never closed',
      '"a,b\n1,2\n',
      /CSV line 1 \(the header\): a quoted value is not closed/,
      'duckdb misreads',
    ],
  ];
  for (const [name, body, message, duckdb] of refused) {
    it(`refuses ${name}, naming the line, in any pieces (${duckdb} without it)`, async () => {
      for (const step of [1, 2, 3, body.length]) {
        const { error } = scan(Buffer.from(body), step);
        expect(error?.message, `pieces of ${step}`).toMatch(message);
      }
      const whole = await read(
        [{ file: write(body), firstLine: 2 }],
        2,
        body.startsWith('a,b\r\n') ? 'crlf' : 'lf',
      );
      if (duckdb === 'duckdb fails') expect(whole).toHaveProperty('problem');
      else expect(whole).not.toEqual({ rows: [['1', '2']] });
    });
  }

  it('takes what DuckDB takes: a quote inside an unquoted value, spaces around a quoted one, a byte-order mark', async () => {
    const body = '\ufeff"a", b\n1,ab"c\n2, "x,y" \n"3",""\n';
    const { scanner, error } = scan(Buffer.from(body), 1);
    expect(error).toBeUndefined();
    expect(scanner?.records).toBe(4);
    expect(await read([{ file: write(body), firstLine: 2 }], 2, 'lf')).toEqual({
      rows: [
        ['1', 'ab"c'],
        ['2', 'x,y'],
        ['3', ''],
      ],
    });
  });

  it('refuses a record longer than its limit, naming the line it starts on, even without a line end', () => {
    const body = Buffer.from(`a\n1\n"${'x\n'.repeat(10)}"\n2\n`);
    expect(scan(body, 4, 15).error?.message).toMatch(
      /CSV line 3: the record starting there is longer than 15 bytes/,
    );
    expect(scan(Buffer.from(`a\n1\n${'y'.repeat(40)}`), 8, 15).error?.message).toMatch(
      /CSV line 3: the record/,
    );
    expect(scan(body, 4, 22).error).toBeUndefined();
  });
});

const CASES: [string, string][] = [
  ['plain', 'line,x\n2,a\n3,b\n4,c\n'],
  ['quoted newlines', 'line,x\n2,"a\nb"\n4,"c\n\nd"\n7,e\n'],
  ['blank lines between records', 'line,x\n2,a\n\n4,b\n\n\n7,c\n'],
  ['CRLF', 'line,x\r\n2,a\r\n3,"b\r\nc"\r\n5,d\r\n'],
  ['quotes inside quotes', 'line,x\n2,"say ""hi""\nthere"\n4,""\n5,"a,b"\n'],
  ['quoted header', '"line","x\ny"\n3,a\n4,b\n'],
  ['a quote inside an unquoted value', 'line,x\n2,a"b\n3,"c\nd"\n5,e\n'],
];

/**
 * The line of a record, as the insert's error messages report it, checked against the
 * records DuckDB's reader actually yields: each record's first field holds its line.
 */
describe('lineOfCsvRecord', () => {
  for (const [name, csv] of CASES) {
    it(`agrees with DuckDB’s reader: ${name}`, async () => {
      const file = write(csv);
      const lineEnd = csv.includes('\r\n') ? 'crlf' : 'lf';
      const whole = await read([{ file, firstLine: 2 }], 2, lineEnd);
      if (!('rows' in whole)) throw new Error(`DuckDB refused ${name}`);
      expect(whole.rows.length).toBeGreaterThan(1);
      for (const [i, row] of whole.rows.entries()) {
        expect(await lineOfCsvRecord(file, i + 1, 2), `record ${i + 1}`).toBe(Number(row[0]));
      }
    });
  }

  it('counts a blank line as a record in a one-column CSV, as DuckDB does', async () => {
    const file = write('x\na\n\nb\n');
    expect(await read([{ file, firstLine: 2 }], 1, 'lf')).toEqual({ rows: [['a'], [null], ['b']] });
    expect(await lineOfCsvRecord(file, 2, 1)).toBe(3);
    expect(await lineOfCsvRecord(file, 3, 1)).toBe(4);
  });
});
