import fs from 'node:fs/promises';

/** Free bytes for this process on the disk under `dir`, or undefined when the system cannot say. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const stats = await fs.statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}
