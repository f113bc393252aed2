import fs from 'node:fs';

/**
 * A CSV of `columns` columns and about `targetBytes` bytes, whatever the width: the same kinds
 * of value in turn across the columns (integers, doubles as JavaScript prints them, words,
 * booleans, dates, 0x hashes), so a 10-column and a 10,000-column file of the same size hold
 * the same values in different shapes. Returns the number of rows.
 */
export function writeWideCsv(file: string, columns: number, targetBytes: number): number {
  const fd = fs.openSync(file, 'w');
  const kinds = [
    (r: number, c: number) => String(r * 31 + c),
    (r: number, c: number) => String((r + 1) / (c + 7)),
    (r: number, c: number) => `w${(r + c) % 997}`,
    (r: number, c: number) => String((r + c) % 2 === 0),
    (r: number, c: number) =>
      `2024-${String((c % 12) + 1).padStart(2, '0')}-${String((r % 28) + 1).padStart(2, '0')}`,
    (r: number, c: number) => `0x${((r * 2654435761 + c) >>> 0).toString(16).padStart(8, '0')}`,
  ];
  let written = fs.writeSync(fd, `${Array.from({ length: columns }, (_, c) => `col${c}`).join(',')}\n`);
  let rows = 0;
  let batch = '';
  while (written + batch.length < targetBytes) {
    const fields: string[] = [];
    for (let c = 0; c < columns; c++)
      fields.push((kinds[c % kinds.length] as (r: number, c: number) => string)(rows, c));
    batch += `${fields.join(',')}\n`;
    rows++;
    if (batch.length > 1 << 20) {
      written += fs.writeSync(fd, batch);
      batch = '';
    }
  }
  fs.writeSync(fd, batch);
  fs.closeSync(fd);
  return rows;
}
