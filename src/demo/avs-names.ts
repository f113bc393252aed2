import { quoteLiteral } from '../storage/sql.js';

/**
 * Names for the demo's invented AVSs: a word and a kind of service, e.g. "Helix Oracle".
 * EigenDA (a real AVS) comes first; the rest are made up.
 */

export const EIGEN_DA = { address: '0x870679e138bcdf293b7ff14dd44b70fc97e12fc0', name: 'EigenDA' } as const;

const WORDS = [
  'Nimbus',
  'Quartz',
  'Helix',
  'Lumen',
  'Orbit',
  'Vertex',
  'Cobalt',
  'Meridian',
  'Aegis',
  'Zephyr',
  'Solace',
  'Tessera',
  'Pylon',
  'Ember',
  'Halcyon',
  'Arbor',
  'Strata',
  'Cipher',
  'Nexa',
  'Polaris',
  'Kestrel',
  'Obsidian',
  'Sable',
  'Tundra',
];

const KINDS = [
  'DA',
  'Oracle',
  'Sequencer',
  'Bridge',
  'Prover',
  'Coprocessor',
  'Keeper Network',
  'Relay',
  'Guard',
  'Watchtower',
  'Rollup Service',
  'Randomness',
  'Indexer',
  'Messaging',
  'Settlement',
  'Attestation',
];

/**
 * SQL for the name of invented AVS number `index` (0-based, an integer expression). The
 * kind steps by 7 (coprime with the number of kinds) so that neighbours differ in both
 * words and every pair is used once before a numeral is appended.
 */
export function inventedAvsNameSql(index: string): string {
  const words = `[${WORDS.map(quoteLiteral).join(', ')}]`;
  const kinds = `[${KINDS.map(quoteLiteral).join(', ')}]`;
  const pairs = WORDS.length * KINDS.length;
  return `(${words}[(${index}) % ${WORDS.length} + 1] || ' ' || ${kinds}[(7 * (${index}) + (${index}) // ${WORDS.length}) % ${KINDS.length} + 1]
    || CASE WHEN (${index}) >= ${pairs} THEN ' ' || ((${index}) // ${pairs} + 1)::VARCHAR ELSE '' END)`;
}
