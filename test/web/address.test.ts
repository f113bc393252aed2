import { describe, expect, it } from 'vitest';
import { type Address, addressHash, readAddress } from '../../web/workspace/address.js';

/** What the workspace's address names, and back (web/workspace/address.ts). */

describe('readAddress', () => {
  it.each([
    ['#query=12', { query: 12 }],
    ['query=12', { query: 12 }],
    ['#execution=01JABCDEFGHJKMNPQRSTVWXYZ0', { execution: '01JABCDEFGHJKMNPQRSTVWXYZ0' }],
    // A query id that is not a number is ignored; an execution beside it is still read.
    ['#query=12abc', undefined],
    ['#query=-1&execution=E1', { execution: 'E1' }],
    ['#query=7&execution=E1', { query: 7 }],
    ['#execution=', undefined],
    ['#execution=a%20b', { execution: 'a b' }],
    ['', undefined],
    ['#', undefined],
    ['#something=else', undefined],
  ])('%j → %j', (hash, expected) => {
    expect(readAddress(hash)).toEqual(expected);
  });
});

describe('addressHash', () => {
  it.each<[Address | undefined, string]>([
    [{ query: 12 }, '#query=12'],
    [{ execution: '01JABC' }, '#execution=01JABC'],
    [undefined, ''],
  ])('%j → %j', (address, expected) => {
    expect(addressHash(address)).toBe(expected);
  });

  it('is read back as what it names', () => {
    for (const address of [{ query: 0 }, { query: 123456 }, { execution: '01J9ZZ' }] as Address[]) {
      expect(readAddress(addressHash(address))).toEqual(address);
    }
  });
});
