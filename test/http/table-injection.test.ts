import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';
import { tableCalls } from '../support/tables.js';

/**
 * Every string a client controls in the table operations (column names, description, CSV
 * header, NDJSON keys, values) tries to break out of its place in the SQL; afterwards the
 * values are stored as sent and nothing else has changed.
 */

let service: TestService;
let calls: ReturnType<typeof tableCalls>;

const NASTY = [
  'plain',
  'quote"d',
  "it's",
  'semi; DROP TABLE alice.victim; --',
  "x') ; DELETE FROM _service.tables; --",
  'slash/and~tilde',
  'ünï cödé',
  '_$1 ?',
];

function csvField(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

beforeAll(async () => {
  service = await startTestService();
  calls = tableCalls(service);
  await calls.createTable(KEYS.alice, 'alice.victim', [{ name: 'x', type: 'integer' }]);
  await calls.insert(KEYS.alice, 'alice.victim', 'x\n1\n');
});
afterAll(async () => {
  await service.stop();
});

describe('injection through the table operations', () => {
  it('stores nasty column names, description and values exactly, and touches nothing else', async () => {
    const description = "'); DROP TABLE alice.victim; --";
    await calls.createTable(
      KEYS.alice,
      'alice.nasty',
      NASTY.map((name) => ({ name, type: 'varchar' })),
      { description },
    );
    const values = NASTY.map((name) => `${name} \\ ' " ; --`);
    const header = [...NASTY].reverse().map(csvField).join(',');
    const row = [...values].reverse().map(csvField).join(',');
    expect((await calls.insert(KEYS.alice, 'alice.nasty', `${header}\n${row}\n`)).body).toMatchObject({
      rows_written: 1,
    });
    const object = Object.fromEntries(NASTY.map((name, i) => [name, values[i]]));
    expect(
      (await calls.insert(KEYS.alice, 'alice.nasty', `${JSON.stringify(object)}\n`, 'application/x-ndjson'))
        .body,
    ).toMatchObject({ rows_written: 1 });

    const stored = await calls.rows('alice.nasty');
    expect(stored).toEqual([object, object]);
    expect((await calls.describe(KEYS.alice, 'alice.nasty')).body).toMatchObject({
      description,
      columns: NASTY.map((name) => ({ name, type: 'varchar', nullable: true })),
    });
    expect(await calls.rows('alice.victim')).toEqual([{ x: 1 }]);
    const listed = await service.json<{ tables: unknown[] }>('/v1/tables', { key: KEYS.alice });
    expect(listed.body.tables).toHaveLength(2);
  });

  it('refuses unknown nasty keys and header names by name, without running them', async () => {
    const key = "zz'); DROP TABLE alice.victim; --";
    const ndjson = await calls.insert(
      KEYS.alice,
      'alice.nasty',
      `${JSON.stringify({ [key]: 1 })}\n`,
      'application/x-ndjson',
    );
    expect(ndjson.status).toBe(400);
    expect(ndjson.body.error).toContain(JSON.stringify(key));
    const csv = await calls.insert(KEYS.alice, 'alice.nasty', `${csvField(key)}\n1\n`);
    expect(csv.status).toBe(400);
    expect(await calls.rows('alice.victim')).toEqual([{ x: 1 }]);
  });

  it('refuses names in paths that are not names', async () => {
    for (const path of [
      '/v1/table/alice/victim%22%3B%20DROP%20TABLE%20alice.victim%3B--/clear',
      '/v1/table/alice%22/victim/clear',
      "/v1/table/alice/victim'/clear",
    ]) {
      const answer = await service.json(path, { method: 'POST', key: KEYS.alice });
      expect(answer.status, path).toBe(400);
    }
    expect(await calls.rows('alice.victim')).toEqual([{ x: 1 }]);
  });
});
