import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileBody, type RowsBeingWritten } from '../../src/results/page-body.js';
import { rowIdParts, rowIdRanges } from '../../src/results/row-id-pages.js';
import { RowsInParts } from '../../src/results/rows-in-parts.js';
import { tempDir } from '../support/service.js';

/**
 * Parts of a long range are written a few at a time and handed over in order; their files
 * are removed by whoever takes them, or by discard(). The ranges cover a page exactly.
 */

/** Writes part `i` into a real file once `release(i)` is called; records how many are being written. */
function slowWriter(dir: string) {
  const releases = new Map<number, () => void>();
  const state = { writing: 0, mostWriting: 0, started: [] as number[] };
  const write = (part: number): RowsBeingWritten => {
    state.started.push(part);
    state.writing++;
    state.mostWriting = Math.max(state.mostWriting, state.writing);
    const file = path.join(dir, `part-${part}`);
    fs.writeFileSync(file, '');
    const written = (async (): Promise<FileBody> => {
      await new Promise<void>((resolve) => releases.set(part, resolve));
      state.writing--;
      if (part === 13) {
        fs.rmSync(file);
        throw new Error('part 13 failed');
      }
      fs.writeFileSync(file, `${part},`);
      return FileBody.written([{ path: file, size: fs.statSync(file).size }], 1);
    })();
    written.catch(() => undefined);
    return { path: file, created: Promise.resolve(), written, trailing: 1 };
  };
  const release = async (part: number) => {
    for (let i = 0; i < 100 && !releases.has(part); i++) await new Promise((r) => setTimeout(r, 5));
    releases.get(part)?.();
  };
  return { write, release, state };
}

describe('RowsInParts', () => {
  it('writes at most atOnce parts at a time and window parts ahead of the one taken, in order', async () => {
    const dir = tempDir('rows-in-parts-');
    const { write, release, state } = slowWriter(dir);
    const parts = new RowsInParts(6, write, 2, 3);
    expect(state.started).toEqual([0, 1]);
    await release(0);
    await new Promise((r) => setTimeout(r, 10));
    // 0 written, not taken: 1 and 2 are being written, 3 waits for the window.
    expect(state.started).toEqual([0, 1, 2]);
    const first = await parts.part(0).written;
    expect(fs.readFileSync(first.files[0]?.path as string, 'utf8')).toBe('0,');
    await release(1);
    await release(2);
    const second = await parts.part(1).written;
    expect(second.rowsBytes).toBe(1);
    for (const index of [2, 3, 4, 5]) {
      const part = parts.part(index);
      expect(part.path).toBe(path.join(dir, `part-${index}`));
      await release(index);
      expect((await part.written).files[0]?.path).toBe(path.join(dir, `part-${index}`));
    }
    expect(state.started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(state.mostWriting).toBe(2);
  });

  it('discard() starts no more parts and removes the files of those not taken', async () => {
    const dir = tempDir('rows-in-parts-');
    const { write, release, state } = slowWriter(dir);
    const parts = new RowsInParts(10, write, 2, 3);
    const discarded = parts.discard();
    await release(0);
    await release(1);
    await discarded;
    expect(state.started).toEqual([0, 1]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a part that fails fails its taker, and discard() still removes the others', async () => {
    const dir = tempDir('rows-in-parts-');
    const { write, release } = slowWriter(dir);
    const parts = new RowsInParts(20, write, 20, 20);
    for (let part = 0; part < 20; part++) await release(part);
    for (let part = 0; part < 13; part++) await parts.part(part).written;
    await expect(parts.part(13).written).rejects.toThrow('part 13 failed');
    await parts.discard();
    expect(fs.readdirSync(dir).sort()).toEqual(Array.from({ length: 13 }, (_, i) => `part-${i}`).sort());
  });
});

describe('row-id ranges of a page', () => {
  const covers = (ranges: [number, number][], offset: number, count: number) => {
    expect(ranges[0]?.[0]).toBe(offset);
    expect(ranges.at(-1)?.[1]).toBe(offset + count);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]?.[0]).toBe(ranges[i - 1]?.[1]);
    for (const [from, to] of ranges) expect(to).toBeGreaterThan(from);
  };

  it.each([
    [0, 1, 1],
    [5, 32_767, 1],
    [0, 32_768, 2],
    [999_990, 41_666, 2],
    [3, 245_760, 2],
  ])('rowIdRanges(%i, %i): %i contiguous ranges', (offset, count, parts) => {
    const ranges = rowIdRanges(offset, count);
    expect(ranges).toHaveLength(parts);
    covers(ranges, offset, count);
  });

  it.each([
    [0, 245_761, 122_880, 3],
    [7, 1_000_000, 122_880, 9],
    [7, 1_000_000, 1_000_000, 1],
    [0, 10_000_000, 762_600, 14],
  ])('rowIdParts(%i, %i, %i): %i parts of at most that many rows', (offset, count, rowsPerPart, parts) => {
    const ranges = rowIdParts(offset, count, rowsPerPart);
    expect(ranges).toHaveLength(parts);
    covers(ranges, offset, count);
    for (const [from, to] of ranges) expect(to - from).toBeLessThanOrEqual(rowsPerPart);
  });
});
