import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, uploadBody } from '../support/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

/** A CSV whose every row carries its version, so a mix of two uploads is visible. */
function versioned(version: string, rows: number): string {
  const lines = ['version,n'];
  for (let i = 0; i < rows; i++) lines.push(`${version},${i}`);
  return `${lines.join('\n')}\n`;
}

async function versionsIn(table: string) {
  return service.database.read((s) =>
    s.all<{ version: string; n: bigint }>(
      `SELECT version, count(*) AS n FROM alice.${table} GROUP BY version`,
    ),
  );
}

describe('concurrent uploads', () => {
  it('two concurrent uploads to one name leave exactly one of them whole', async () => {
    const [a, b] = await Promise.all([
      service.json('/v1/table/upload/csv', uploadBody({ table_name: 'race', data: versioned('A', 200_000) })),
      service.json('/v1/table/upload/csv', uploadBody({ table_name: 'race', data: versioned('B', 150_000) })),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const versions = await versionsIn('dataset_race');
    expect(versions).toHaveLength(1);
    const [only] = versions;
    expect(only && { A: 200_000n, B: 150_000n }[only.version]).toBe(only?.n);
  });

  it('readers during a replace see the old table or the new one, never a mix', async () => {
    const old = versioned('old', 100_000);
    const next = versioned('new', 300_000);
    expect(
      (await service.json('/v1/table/upload/csv', uploadBody({ table_name: 'swap', data: old }))).status,
    ).toBe(200);
    let done = false;
    const seen = new Set<string>();
    const reader = (async () => {
      while (!done) {
        const versions = await versionsIn('dataset_swap');
        expect(versions).toHaveLength(1);
        const [v] = versions;
        expect(v && (v.version === 'old' ? v.n === 100_000n : v.n === 300_000n)).toBe(true);
        if (v) seen.add(v.version);
      }
    })();
    const upload = await service.json('/v1/table/upload/csv', uploadBody({ table_name: 'swap', data: next }));
    done = true;
    await reader;
    expect(upload.status).toBe(200);
    expect(seen.has('old')).toBe(true);
    expect((await versionsIn('dataset_swap'))[0]?.version).toBe('new');
  });
});
