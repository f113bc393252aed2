import { writeCsvFile } from './csv-file.js';
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
  const random = seededRandom(7);
  const hex = (length: number) => randomHex(random, length);
  const traders = Array.from({ length: 5000 }, () => `0x${hex(40)}`);
  const tokens = ['stETH', 'rETH', 'cbETH', 'ETHx', 'mETH', 'swETH', 'USDC', 'WBTC'];
  const prices = [3512.25, 3890.1, 3605.75, 3550, 3700.4, 3530.6, 1, 64123.5];
  const venues = ['uniswap-v3', 'curve', 'balancer', '1inch', 'cowswap'];
  const notes = ['', 'arbitrage', '"rebalance, weekly"', '"said ""gm"" first"', 'dca', ''];
  const start = Date.UTC(2024, 0, 1);
  return writeCsvFile(file, targetBytes, MIXED_HEADER, (row) => {
    const block = 18_900_000 + Math.floor(row / 7);
    const at = new Date(start + (block - 18_900_000) * 12_000 + Math.floor(random() * 1000));
    const token = row % tokens.length;
    // Amounts as a script computes them: quotients and sums print with up to 17 digits.
    const amount = row % 5 === 0 ? Math.floor(random() * 100) / 4 : (random() * 1000) / ((row % 7) + 1);
    const price = (prices[token] as number) * (1 + (random() - 0.5) / 50);
    const usd = row % 11 === 0 ? '' : String(amount * price);
    const raw = BigInt(Math.floor(amount * 1e6)) * 1_000_000_000_000n + BigInt(row % 997);
    return `${at.toISOString()},${block},0x${hex(64)},${traders[row % traders.length]},${tokens[token]},${amount},${price},${usd},${raw},${row % 3 === 0},${at.toISOString().slice(0, 10)},${venues[row % venues.length]},${notes[row % notes.length]}`;
  });
}
