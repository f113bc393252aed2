import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileBody } from '../../src/results/page-body.js';
import { PagePrefetch } from '../../src/results/page-prefetch.js';
import { tempDir } from '../support/service.js';

/** Pages written ahead: taken once, bounded in number, removed when nobody takes them. */

function writer(dir: string) {
  let n = 0;
  return async (): Promise<FileBody> => {
    const file = path.join(dir, `page-${n++}`);
    fs.writeFileSync(file, 'rows,');
    return FileBody.written([{ path: file, size: 5 }], 1);
  };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('PagePrefetch', () => {
  it('hands a page written ahead to the one request that takes it', async () => {
    const dir = tempDir('prefetch-');
    const ahead = new PagePrefetch(4, 60_000);
    ahead.start('p', writer(dir));
    ahead.start('p', writer(dir)); // already ahead: not written twice
    const rows = await ahead.take('p');
    expect(rows?.files[0]?.path).toBe(path.join(dir, 'page-0'));
    expect(ahead.take('p')).toBeUndefined();
    expect(fs.readdirSync(dir)).toEqual(['page-0']);
  });

  it('keeps at most maxPages ahead, the oldest removed for a new one, and clear() removes them all', async () => {
    const dir = tempDir('prefetch-');
    const ahead = new PagePrefetch(2, 60_000);
    const write = writer(dir);
    for (const key of ['a', 'b', 'c']) ahead.start(key, write);
    expect(ahead.size).toBe(2);
    // 'a', the oldest, made room for 'c': its file is removed once written.
    expect(ahead.take('a')).toBeUndefined();
    await until(() => !fs.readdirSync(dir).includes('page-0'));
    expect(fs.readdirSync(dir).sort()).toEqual(['page-1', 'page-2']);
    expect((await ahead.take('c'))?.files[0]?.path).toBe(path.join(dir, 'page-2'));
    fs.rmSync(path.join(dir, 'page-2'));
    await ahead.clear();
    expect(ahead.size).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('removes a page nobody takes within its time', async () => {
    const dir = tempDir('prefetch-');
    const ahead = new PagePrefetch(4, 50);
    ahead.start('p', writer(dir));
    await until(() => ahead.size === 0 && fs.readdirSync(dir).length === 0);
    expect(ahead.size).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(ahead.take('p')).toBeUndefined();
  });

  it('a page that could not be written is taken as none (the request writes it)', async () => {
    const ahead = new PagePrefetch(4, 60_000);
    ahead.start('p', () => Promise.reject(new Error('disk full')));
    expect(await ahead.take('p')).toBeUndefined();
  });
});
