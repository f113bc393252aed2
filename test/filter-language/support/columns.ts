import type { ResultColumn } from '../../../src/filter-language/index.js';

/** A result shaped like the AVS metrics, plus a column of every other kind the language knows. */
export const COLUMNS: readonly ResultColumn[] = [
  { name: 'avs_name', type: 'varchar' },
  { name: 'avs_contract_address', type: 'varchar' },
  { name: 'num_operators', type: 'bigint' },
  { name: 'total_TVL', type: 'double' },
  { name: 'stETH_TVL', type: 'double' },
  { name: 'share', type: 'decimal(18,4)' },
  { name: 'big', type: 'hugeint' },
  { name: 'amount', type: 'bignum' },
  { name: 'small', type: 'tinyint' },
  { name: 'wide', type: 'uhugeint' },
  { name: 'launched', type: 'date' },
  { name: 'updated_at', type: 'timestamp' },
  { name: 'updated_tz', type: 'timestamp with time zone' },
  { name: 'updated_ns', type: 'timestamp_ns' },
  { name: 'active', type: 'boolean' },
  { name: 'payload', type: 'blob' },
  { name: 'at_time', type: 'time' },
  { name: 'special, "col"', type: 'varchar' },
  { name: 'in', type: 'varchar' },
];
