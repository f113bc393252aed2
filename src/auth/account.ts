import type { Plan } from '../config/config.js';

/** Who a key belongs to. The handle is also the account's namespace (a DuckDB schema). */
export interface Account {
  handle: string;
  plan: Plan;
  admin: boolean;
}

/**
 * Namespaces no account may be named after: DuckDB's own schemas, the shared data set, and
 * `operator`, the owner of the operator's query files and of the scheduler's runs.
 */
export const RESERVED_NAMESPACES = new Set([
  'main',
  'information_schema',
  'pg_catalog',
  'temp',
  'system',
  'restaking',
  'operator',
]);
