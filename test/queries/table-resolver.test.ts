import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/auth/account.js';
import type { WrittenTableName } from '../../src/queries/sandbox/table-names.js';
import { tableResolver } from '../../src/queries/sandbox/table-resolver.js';
import type { Database } from '../../src/storage/database.js';
import { ADMIN, ALICE, BOB, openFixture } from './support/sandbox-fixture.js';

/** tableResolver against the fixture's `_service.tables`, with the visibility rule of every read path. */

let database: Database;

beforeAll(async () => {
  database = await openFixture();
});

afterAll(() => database.close());

const resolve = (account: Account, name: WrittenTableName) =>
  database.read(async (session) => (await tableResolver(session, account)([name]))[0]);

describe('tableResolver', () => {
  it.each([
    ['own table, unqualified', ALICE, { table: 'dataset_prices' }, ['alice', 'dataset_prices'], false],
    ['own private table', ALICE, { table: 'notes' }, ['alice', 'notes'], true],
    ['own table, qualified', ALICE, { schema: 'alice', table: 'notes' }, ['alice', 'notes'], true],
    [
      'another account’s public table',
      ALICE,
      { schema: 'bob', table: 'public_t' },
      ['bob', 'public_t'],
      false,
    ],
    ['restaking', ALICE, { schema: 'restaking', table: 'avs' }, ['restaking', 'avs'], false],
    ['the owner’s private table', BOB, { table: 'secret' }, ['bob', 'secret'], true],
    ['any private table, for an admin', ADMIN, { schema: 'bob', table: 'secret' }, ['bob', 'secret'], true],
  ] as const)('resolves %s', async (_name, account, name, [schema, table], isPrivate) => {
    expect(await resolve(account, name)).toEqual({ schema, table, isPrivate });
  });

  it.each([
    ['another account’s private table', ALICE, { schema: 'bob', table: 'secret' }],
    ['a name of another namespace, unqualified', ALICE, { table: 'public_t' }],
    ['a table that does not exist', ALICE, { schema: 'bob', table: 'nothing' }],
    ['the service’s bookkeeping', ADMIN, { schema: '_service', table: 'tables' }],
    ['a result table', ADMIN, { schema: '_results', table: 'e_01fixture' }],
    ['a catalog view', ADMIN, { schema: 'information_schema', table: 'tables' }],
    ['a table of DuckDB’s default schema', ADMIN, { schema: 'main', table: 'a' }],
    ['a name in capitals (the sandbox lowercases first)', BOB, { schema: 'BOB', table: 'SECRET' }],
  ] as const)('knows nothing of %s', async (_name, account, name) => {
    expect(await resolve(account, name)).toBeUndefined();
  });
});
