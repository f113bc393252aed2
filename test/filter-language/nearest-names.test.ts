import { describe, expect, it } from 'vitest';
import { nearestNames } from '../../src/filter-language/nearest-names.js';

/** "Did you mean": which names are near, and in which order. */
describe('nearestNames', () => {
  const candidates = [
    'dataset_trades',
    'dataset_prices',
    'avs_name',
    'total_TVL',
    'amount',
    'amount_usd',
    'name',
    'day',
  ];
  it.each([
    ['trades', ['dataset_trades']],
    ['TOTAL_tvl', ['total_TVL']],
    ['avs_nmae', ['avs_name']],
    ['nme', ['name']],
    ['amount', ['amount', 'amount_usd']],
    ['amont', ['amount']],
    ['dy', ['day']],
    ['block_time', []],
    ['x', []],
  ] as const)('%s → %j', (name, expected) => {
    expect(nearestNames(name, candidates)).toEqual(expected);
  });

  it('gives at most `max`, best first, and each once', () => {
    expect(nearestNames('ab', ['ac', 'ab', 'ad', 'ae', 'ab'], 2)).toEqual(['ab', 'ac']);
  });
});
