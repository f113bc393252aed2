import type { RefusalKind } from './refusals.js';
import type { NamedTable, QualifiedTable } from './table-names.js';
import type { CheckOptions } from './tree-checker.js';

/** What the service and a check worker (check-worker.ts) tell each other; plain data only. */

export type ToWorker =
  /** Begin a check: parse and walk the SQL, then answer `tables`, or at once `done`. */
  | { type: 'check'; id: number; sql: string; options: CheckOptions }
  /** The check's tables resolved: `targets[i]` is what `tables[i]` means. */
  | { type: 'resolved'; id: number; targets: QualifiedTable[] }
  /** A table was refused: drop the check. */
  | { type: 'abandon'; id: number }
  | { type: 'close' };

export interface Refusal {
  message: string;
  location: number | undefined;
  unit: 'byte' | 'code point' | 'index';
  kind: RefusalKind;
}

export type FromWorker =
  /** The worker's DuckDB is open: it takes checks. */
  | { type: 'ready' }
  /** The SQL names these tables; the service resolves them and answers `resolved`. */
  | { type: 'tables'; id: number; tables: NamedTable[] }
  | { type: 'done'; id: number; sql: string }
  | { type: 'refused'; id: number; refusal: Refusal }
  /** Not the SQL's fault: a bug, or DuckDB failing. */
  | { type: 'failed'; id: number; message: string };
