import { writeCsvFile } from './csv-file.js';
import { randomHex, seededRandom } from './random-values.js';

/** A CSV shaped like on-chain data: block numbers, addresses, amounts, timestamps, text. */
export function writeBenchmarkCsv(file: string, targetBytes: number): number {
  const random = seededRandom(42);
  const hex = (length: number) => randomHex(random, length);
  const tokens = ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH'];
  return writeCsvFile(
    file,
    targetBytes,
    'block_number,log_index,tx_hash,staker,token,amount,block_time,is_deposit,memo',
    (row) => {
      const block = 18_000_000 + Math.floor(row / 12);
      const time = new Date(Date.UTC(2023, 8, 1) + block * 12_000)
        .toISOString()
        .slice(0, 19)
        .replace('T', ' ');
      const memo = row % 9 === 0 ? '"restake, then delegate"' : `note ${row % 1000}`;
      return `${block},${row % 40},0x${hex(64)},0x${hex(40)},${tokens[row % tokens.length]},${(random() * 1000).toFixed(6)},${time},${row % 3 === 0},${memo}`;
    },
  );
}
