import type { DeclaredColumn } from '../tables/table-schema.js';

/**
 * The restaking source tables of the AVS metrics query (DESIGN.md §6), as declared
 * schemas: an indexer creates them with the create operation and appends events with
 * insert; the demo loader creates and fills them the same way.
 */

export const RESTAKING_NAMESPACE = 'restaking';

export type SourceTableName =
  | 'avs'
  | 'operator_avs_registrations'
  | 'staker_delegations'
  | 'operator_share_changes'
  | 'strategies';

export interface SourceTable {
  name: SourceTableName;
  description: string;
  columns: readonly DeclaredColumn[];
  /** About what one row takes as CSV text, for the catalog's size estimate. */
  bytesPerRow: number;
}

const column = (name: string, type: DeclaredColumn['type']): DeclaredColumn => ({
  name,
  type,
  nullable: true,
});

export const SOURCE_TABLES: readonly SourceTable[] = [
  {
    name: 'avs',
    description: 'Actively Validated Services: contract address and name.',
    columns: [column('avs_contract_address', 'varchar'), column('avs_name', 'varchar')],
    bytesPerRow: 64,
  },
  {
    name: 'operator_avs_registrations',
    description: 'Operator registration events per AVS (status 1 registered, 0 deregistered).',
    columns: [
      column('block_number', 'bigint'),
      column('log_index', 'integer'),
      column('operator', 'varchar'),
      column('avs_contract_address', 'varchar'),
      column('status', 'integer'),
    ],
    bytesPerRow: 100,
  },
  {
    name: 'staker_delegations',
    description: 'Staker delegation events (delegated false = undelegated from the operator).',
    columns: [
      column('block_number', 'bigint'),
      column('log_index', 'integer'),
      column('staker', 'varchar'),
      column('operator', 'varchar'),
      column('delegated', 'boolean'),
    ],
    bytesPerRow: 102,
  },
  {
    name: 'operator_share_changes',
    description:
      "Changes of an operator's delegated shares, per staker and strategy (int256 wei-like units).",
    columns: [
      column('block_number', 'bigint'),
      column('log_index', 'integer'),
      column('operator', 'varchar'),
      column('staker', 'varchar'),
      column('strategy', 'varchar'),
      column('shares_delta', 'int256'),
    ],
    bytesPerRow: 160,
  },
  {
    name: 'strategies',
    description: 'Restaking strategies: token and the rate from shares to underlying token units.',
    columns: [
      column('strategy', 'varchar'),
      column('token', 'varchar'),
      column('shares_to_underlying', 'double'),
    ],
    bytesPerRow: 60,
  },
];
