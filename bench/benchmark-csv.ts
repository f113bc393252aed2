import fs from 'node:fs';
import { randomHex, seededRandom } from './random-values.js';

/** A CSV shaped like on-chain data: block numbers, addresses, amounts, timestamps, text. */
export function writeBenchmarkCsv(file: string, targetBytes: number): number {
  const fd = fs.openSync(file, 'w');
  const random = seededRandom(42);
  const hex = (length: number) => randomHex(random, length);
  const tokens = ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH'];
  let written = 0;
  let rows = 0;
  let batch = 'block_number,log_index,tx_hash,staker,token,amount,block_time,is_deposit,memo\n';
  while (written + batch.length < targetBytes) {
    const block = 18_000_000 + Math.floor(rows / 12);
    const time = new Date(Date.UTC(2023, 8, 1) + block * 12_000).toISOString().slice(0, 19).replace('T', ' ');
    const memo = rows % 9 === 0 ? '"restake, then delegate"' : `note ${rows % 1000}`;
    batch += `${block},${rows % 40},0x${hex(64)},0x${hex(40)},${tokens[rows % tokens.length]},${(random() * 1000).toFixed(6)},${time},${rows % 3 === 0},${memo}\n`;
    rows++;
    if (batch.length > 1 << 20) {
      fs.writeSync(fd, batch);
      written += batch.length;
      batch = '';
    }
  }
  fs.writeSync(fd, batch);
  written += batch.length;
  fs.closeSync(fd);
  return rows;
}
