import fs from 'node:fs/promises';

/** The 1-based physical line holding byte `position` of a file: newlines before it, plus one. */
export async function lineAtByte(file: string, position: number): Promise<number> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    let line = 1;
    let offset = 0;
    while (offset < position) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, position - offset), offset);
      if (bytesRead === 0) break;
      for (let at = buffer.indexOf(0x0a, 0); at >= 0 && at < bytesRead; at = buffer.indexOf(0x0a, at + 1))
        line++;
      offset += bytesRead;
    }
    return line;
  } finally {
    await handle.close();
  }
}

/**
 * Drops the newlines (and carriage returns) at the very end of a file, so that trailing
 * blank lines do not become rows of NULLs in a one-column CSV. Returns the new size.
 */
export async function trimTrailingNewlines(file: string): Promise<number> {
  const handle = await fs.open(file, 'r+');
  try {
    let size = (await handle.stat()).size;
    const buffer = Buffer.allocUnsafe(1 << 16);
    while (size > 0) {
      const start = Math.max(0, size - buffer.length);
      const { bytesRead } = await handle.read(buffer, 0, size - start, start);
      let end = bytesRead;
      while (end > 0 && (buffer[end - 1] === 0x0a || buffer[end - 1] === 0x0d)) end--;
      size = start + end;
      if (end > 0) break;
    }
    await handle.truncate(size);
    return size;
  } finally {
    await handle.close();
  }
}
