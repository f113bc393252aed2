import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/storage/database.js';
import { lineOfCsvRecord } from '../../src/tables/csv-record-lines.js';
import { csvField, csvReader } from '../../src/tables/insert-readers.js';
import { tempDir } from '../support/service.js';

/**
 * The line of a record, as the insert's error messages report it, checked against the
 * records DuckDB's reader (with the insert's options) actually yields: each record's first
 * field holds the line it starts on.
 */

let database: Database;
let dir: string;

beforeAll(async () => {
  database = await Database.open({ path: ':memory:', readers: 1 });
  dir = tempDir('record-lines-');
});
afterAll(async () => {
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const CASES: [string, string][] = [
  ['plain', 'line,x\n2,a\n3,b\n4,c\n'],
  ['quoted newlines', 'line,x\n2,"a\nb"\n4,"c\n\nd"\n7,e\n'],
  ['blank lines between records', 'line,x\n2,a\n\n4,b\n\n\n7,c\n'],
  ['CRLF', 'line,x\r\n2,a\r\n3,"b\r\nc"\r\n5,d\r\n'],
  ['quotes inside quotes', 'line,x\n2,"say ""hi""\nthere"\n4,""\n5,"a,b"\n'],
  ['quoted header', '"line","x\ny"\n3,a\n4,b\n'],
];

describe('lineOfCsvRecord', () => {
  for (const [name, csv] of CASES) {
    it(`agrees with DuckDB’s reader: ${name}`, async () => {
      const file = path.join(dir, `${name.replaceAll(' ', '-')}.csv`);
      fs.writeFileSync(file, csv);
      const rows = await database.read((session) =>
        session.all<{ line: string }>(`SELECT ${csvField(0)} AS line FROM ${csvReader(2)}`, [file]),
      );
      expect(rows.length).toBeGreaterThan(1);
      for (const [i, row] of rows.entries()) {
        expect(await lineOfCsvRecord(file, i + 1, 2), `record ${i + 1}`).toBe(Number(row.line));
      }
    });
  }

  it('counts a blank line as a record in a one-column CSV, as DuckDB does', async () => {
    const file = path.join(dir, 'one-column.csv');
    fs.writeFileSync(file, 'x\na\n\nb\n');
    const rows = await database.read((session) =>
      session.all<{ x: string | null }>(`SELECT ${csvField(0)} AS x FROM ${csvReader(1)}`, [file]),
    );
    expect(rows).toEqual([{ x: 'a' }, { x: null }, { x: 'b' }]);
    expect(await lineOfCsvRecord(file, 2, 1)).toBe(3);
    expect(await lineOfCsvRecord(file, 3, 1)).toBe(4);
  });
});
