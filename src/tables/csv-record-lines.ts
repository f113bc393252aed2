import fs from 'node:fs';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * The physical line (1-based, the header being line 1) on which data record `ordinal`
 * (1-based) of a CSV starts, counting as DuckDB's reader does with our dialect: `"` quotes,
 * newlines inside quotes belong to the field, and a blank line is skipped unless the CSV
 * has one column (where it is a NULL row). Used only to word an error, after DuckDB has
 * named the failing record by its number.
 */
export async function lineOfCsvRecord(file: string, ordinal: number, fieldCount: number): Promise<number> {
  let line = 1;
  let record = 0;
  let quoted = false;
  let atRecordStart = false;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    const bytes = chunk as Buffer;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      if (atRecordStart) {
        if (byte === CR) continue;
        if (byte === LF && fieldCount > 1) {
          line++;
          continue;
        }
        record++;
        if (record === ordinal) return line;
        atRecordStart = false;
      }
      if (byte === QUOTE) quoted = !quoted;
      else if (byte === LF) {
        line++;
        if (!quoted) atRecordStart = true;
      }
    }
  }
  return line;
}
