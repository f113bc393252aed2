/**
 * The thirteen restaking strategies behind the AVS metrics' token columns, with their
 * Ethereum mainnet addresses (public on-chain facts, copied from the project's reference
 * data so that nothing reads it at run time). The order is the spec's column order.
 *
 * `sharesToUnderlying` is not an on-chain constant (it drifts as rewards accrue), so the
 * demo uses plausible rates: exactly 1 for native restaking, a little above 1 for liquid
 * staking tokens. `weight` is how popular the strategy is among the demo's deposits.
 */

export const TOKENS = [
  'cbETH',
  'stETH',
  'rETH',
  'ETHx',
  'ankrETH',
  'OETH',
  'osETH',
  'swETH',
  'wBETH',
  'sfrxETH',
  'lsETH',
  'mETH',
  'beacon_chain_ETH',
] as const;
export type Token = (typeof TOKENS)[number];

export interface DemoStrategy {
  strategy: string;
  token: Token;
  sharesToUnderlying: number;
  weight: number;
}

export const DEMO_STRATEGIES: readonly DemoStrategy[] = [
  {
    strategy: '0x54945180db7943c0ed0fee7edab2bd24620256bc',
    token: 'cbETH',
    sharesToUnderlying: 1.0037,
    weight: 0.07,
  },
  {
    strategy: '0x93c4b944d05dfe6df7645a86cd2206016c51564d',
    token: 'stETH',
    sharesToUnderlying: 1.0118,
    weight: 0.3,
  },
  {
    strategy: '0x1bee69b7dfffa4e2d53c2a2df135c388ad25dcd2',
    token: 'rETH',
    sharesToUnderlying: 1.0021,
    weight: 0.07,
  },
  {
    strategy: '0x9d7ed45ee2e8fc5482fa2428f15c971e6369011d',
    token: 'ETHx',
    sharesToUnderlying: 1.0046,
    weight: 0.06,
  },
  {
    strategy: '0x13760f50a9d7377e4f20cb8cf9e4c26586c658ff',
    token: 'ankrETH',
    sharesToUnderlying: 1.0009,
    weight: 0.03,
  },
  {
    strategy: '0xa4c637e0f704745d182e4d38cab7e7485321d059',
    token: 'OETH',
    sharesToUnderlying: 1.0152,
    weight: 0.015,
  },
  {
    strategy: '0x57ba429517c3473b6d34ca9acd56c0e735b94c02',
    token: 'osETH',
    sharesToUnderlying: 1.0064,
    weight: 0.03,
  },
  {
    strategy: '0x0fe4f44bee93503346a3ac9ee5a26b130a5796d6',
    token: 'swETH',
    sharesToUnderlying: 1.0013,
    weight: 0.05,
  },
  {
    strategy: '0x7ca911e83dabf90c90dd3de5411a10f1a6112184',
    token: 'wBETH',
    sharesToUnderlying: 1.0027,
    weight: 0.03,
  },
  {
    strategy: '0x8ca7a5d6f3acd3a7a8bc468a8cd0fb14b6bd28b6',
    token: 'sfrxETH',
    sharesToUnderlying: 1.0091,
    weight: 0.04,
  },
  {
    strategy: '0xae60d8180437b5c34bb956822ac2710972584473',
    token: 'lsETH',
    sharesToUnderlying: 1.0055,
    weight: 0.015,
  },
  {
    strategy: '0x298afb19a105d59e74658c4c334ff360bade6dd2',
    token: 'mETH',
    sharesToUnderlying: 1.0032,
    weight: 0.05,
  },
  {
    strategy: '0xbeac0eeeeeeeeeeeeeeeeeeeeeeeeeeeeeebeac0',
    token: 'beacon_chain_ETH',
    sharesToUnderlying: 1,
    weight: 0.22,
  },
];

/**
 * Long-tail strategies that exist on chain but are not in `restaking.strategies`: the
 * metrics must ignore them, so the demo deposits a little into them. The addresses are
 * invented.
 */
export const UNLISTED_STRATEGIES: readonly { strategy: string; weight: number }[] = [
  { strategy: '0x6c3ee4d1b9a2f0e8d7c5b4a3928170f6e5d4c3b2', weight: 0.012 },
  { strategy: '0xd2a9f07c41e8b36a5f0e9d8c7b6a5948372615f0', weight: 0.008 },
];
