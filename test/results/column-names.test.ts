/**
 * Issue 16: every column name an upload accepts can be selected, filtered and sorted through the
 * results endpoints, and through the official TypeScript client, which writes a quote in
 * `columns` as `\"` and leaves backslashes alone. Names are generated, uploaded as a CSV header,
 * read back by a saved query, and named in each parameter.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuneClient } from '@duneanalytics/client-sdk';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientQuoted, spellings, uploadableNames } from '../support/column-names.js';
import { type Envelope, executeAndWait, upload } from '../support/results.js';
import { KEYS, startTestService, type TestService, tempDir } from '../support/service.js';

const QUERY = 1601;
const DUNE_BASE = 'https://api.dune.com/api';
const queriesDir = tempDir('column-names-queries-');
const realFetch = globalThis.fetch;
let service: TestService;

const csvField = (text: string) => `"${text.replaceAll('"', '""')}"`;

/** The table `names`: an `id` and one column per name, three rows whose values sort by id. */
function namesCsv(names: readonly string[]): string {
  const rows = [1, 2, 3].map((id) => [id, ...names.map((_, j) => `v${id}_${j}`)].join(','));
  return `${['id', ...names].map(csvField).join(',')}\n${rows.join('\n')}\n`;
}

async function results(params: Record<string, string>): Promise<Envelope> {
  const query = new URLSearchParams(params).toString();
  const { status, body } = await service.json<Envelope & { error?: string }>(
    `/v1/query/${QUERY}/results?${query}`,
  );
  expect(status, `${query}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

const ids = (envelope: Envelope) => envelope.result?.rows.map((row) => Number(row.id));

beforeAll(async () => {
  fs.writeFileSync(
    path.join(queriesDir, `${QUERY}-names.sql`),
    `-- id: ${QUERY}\n-- name: Names\n-- refresh_seconds: 86400\nSELECT * FROM alice.dataset_names ORDER BY id\n`,
  );
  service = await startTestService({ QUERIES_DIR: queriesDir });
  // The client's base address is a constant: send its requests to the service instead.
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    return realFetch(
      url.startsWith(DUNE_BASE) ? `${service.url}/api${url.slice(DUNE_BASE.length)}` : url,
      init,
    );
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await service?.stop();
  fs.rmSync(queriesDir, { recursive: true, force: true });
});

describe('uploaded column names on the results endpoints', () => {
  it('are each selected, filtered and sorted, by hand and by the TypeScript client', async () => {
    const client = new DuneClient(KEYS.alice);
    await fc.assert(
      fc.asyncProperty(uploadableNames, async (names) => {
        await upload(service, 'names', namesCsv(names));
        expect((await executeAndWait(service, QUERY)).state).toBe('QUERY_STATE_COMPLETED');
        expect((await results({ limit: '1' })).result?.metadata.column_names).toEqual(['id', ...names]);
        for (const [j, name] of names.entries()) {
          for (const spelling of spellings(name)) {
            const selected = await results({ columns: `${spelling},id` });
            expect(selected.result?.metadata.column_names).toEqual([name, 'id']);
            expect(selected.result?.rows[0]).toEqual({ [name]: `v1_${j}`, id: 1 });
            expect(ids(await results({ filters: `${spelling} = 'v2_${j}'`, columns: 'id' }))).toEqual([2]);
            expect(ids(await results({ sort_by: `${spelling} DESC`, columns: 'id' }))).toEqual([3, 2, 1]);
          }
          const { results: viaClient } = await client.exec.getLastExecutionResults(QUERY, {
            columns: [name, 'id'].filter((c) => c.includes('"') || (!c.includes(',') && c === c.trim())),
            filters: `${clientQuoted(name)} <> 'v2_${j}'`,
            sort_by: `${clientQuoted(name)} desc`,
          });
          expect(viaClient.result?.rows.map((row) => Number(row.id))).toEqual([3, 1]);
        }
      }),
      { numRuns: 8, examples: [[['x\\', 'a"b\\', 'risk "tier", v2\\']], [['a\\"b', 'p\\" = 1\\', 'in(']]] },
    );
  });
});
