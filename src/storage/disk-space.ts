import fs from 'node:fs/promises';

/** The disk under a directory: bytes free for this process, and its whole size. */
export interface DiskSpace {
  free: number;
  total: number;
}

/** The disk under `dir`, or undefined when the system cannot say. */
export async function diskSpace(dir: string): Promise<DiskSpace | undefined> {
  try {
    const stats = await fs.statfs(dir);
    return { free: stats.bavail * stats.bsize, total: stats.blocks * stats.bsize };
  } catch {
    return undefined;
  }
}

/** Free bytes for this process on the disk under `dir`, or undefined when the system cannot say. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  return (await diskSpace(dir))?.free;
}

/**
 * DISK_RESERVE's default for a disk of `total` bytes: a tenth of it, at most 2 GB. A fixed
 * 2 GB would stop every users' result on a small disk (a 32 MB one in the fault tests, a
 * laptop's last gigabytes), where a tenth still keeps room for uploads.
 */
export function defaultReserve(total: number | undefined): number {
  const cap = 2e9;
  return total === undefined ? cap : Math.min(cap, Math.floor(total / 10));
}
