import fs from 'node:fs';
import { randomHex, seededRandom } from './random-values.js';

/**
 * A CSV shaped like what data teams export from their own tools: a DEX trades table as a
 * JavaScript or Python script writes it. Timestamps as `Date.toISOString()` prints them
 * (fractional seconds, `Z`), block numbers, 0x hashes and addresses, booleans, token
 * amounts in raw units beyond 64 bits, prices and amounts as JavaScript prints doubles
 * (`0.14285714285714285`, `41.099999999999994`: up to 17 significant digits), dates,
 * quoted text with commas and quotes, and empty fields.
 */
export const MIXED_HEADER =
  'block_time,block_number,tx_hash,trader,token,amount,price_usd,amount_usd,amount_raw,is_buy,day,venue,note';

export function writeMixedCsv(file: string, targetBytes: number): number {
  const fd = fs.openSync(file, 'w');
  const random = seededRandom(7);
  const hex = (length: number) => randomHex(random, length);
  const traders = Array.from({ length: 5000 }, () => `0x${hex(40)}`);
  const tokens = ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH', 'USDC', 'WBTC'];
  const prices = [3512.25, 3890.1, 3605.75, 3550, 3700.4, 3530.6, 1, 64123.5];
  const venues = ['uniswap-v3', 'curve', 'balancer', '1inch', 'cowswap'];
  const notes = ['', 'arbitrage', '"rebalance, weekly"', '"said ""gm"" first"', 'dca', ''];
  const start = Date.UTC(2024, 0, 1);
  let written = 0;
  let rows = 0;
  let batch = `${MIXED_HEADER}\n`;
  while (written + batch.length < targetBytes) {
    const block = 18_900_000 + Math.floor(rows / 7);
    const at = new Date(start + (block - 18_900_000) * 12_000 + Math.floor(random() * 1000));
    const token = rows % tokens.length;
    // Amounts as a script computes them: quotients and sums print with up to 17 digits.
    const amount = rows % 5 === 0 ? Math.floor(random() * 100) / 4 : (random() * 1000) / ((rows % 7) + 1);
    const price = (prices[token] as number) * (1 + (random() - 0.5) / 50);
    const usd = rows % 11 === 0 ? '' : String(amount * price);
    const raw = BigInt(Math.floor(amount * 1e6)) * 1_000_000_000_000n + BigInt(rows % 997);
    batch += `${at.toISOString()},${block},0x${hex(64)},${traders[rows % traders.length]},${tokens[token]},${amount},${price},${usd},${raw},${rows % 3 === 0},${at.toISOString().slice(0, 10)},${venues[rows % venues.length]},${notes[rows % notes.length]}\n`;
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
