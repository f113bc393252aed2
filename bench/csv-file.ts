import fs from 'node:fs';

/**
 * Writes `header` and then the lines `line(0)`, `line(1)`, … to `file` until the next would
 * pass `targetBytes` (about: lines are counted as characters), in writes of about 1 MB;
 * returns how many lines of rows were written.
 */
export function writeCsvFile(
  file: string,
  targetBytes: number,
  header: string,
  line: (index: number) => string,
): number {
  const fd = fs.openSync(file, 'w');
  try {
    let written = 0;
    let rows = 0;
    let batch = `${header}\n`;
    while (written + batch.length < targetBytes) {
      batch += `${line(rows)}\n`;
      rows++;
      if (batch.length > 1 << 20) {
        fs.writeSync(fd, batch);
        written += batch.length;
        batch = '';
      }
    }
    fs.writeSync(fd, batch);
    return rows;
  } finally {
    fs.closeSync(fd);
  }
}
