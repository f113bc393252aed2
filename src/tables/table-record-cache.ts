import type { Database } from '../storage/database.js';
import { findTables, type TableRecord, tableKey } from './table-catalog.js';

/**
 * The table records users' SQL names, kept in memory between changes of the records: every
 * execute looks up each table its SQL names (the sandbox's resolver), and the look-up, a
 * statement on a connection of its own, cost 0.8–1.3 ms of each execute call (the analytics
 * benchmark's queries, 2026-11-27). Kept answers hold only while the records' epoch stays the
 * one they were read at (Database.tableRecordsEpoch: every statement that writes the records,
 * on any connection, moves it, and while one is uncommitted nothing is kept or trusted).
 * Absent tables are kept too, as absent. Bounded: at most MAX_KEPT names, then it starts over.
 */
const MAX_KEPT = 10_000;

export class TableRecordCache {
  private epoch: number | undefined;
  private readonly kept = new Map<string, TableRecord | undefined>();

  constructor(private readonly database: Database) {}

  /** The records of `tables` (`[i]` for `tables[i]`, undefined where none), as findTables gives them. */
  async find(
    tables: readonly { namespace: string; tableName: string }[],
  ): Promise<(TableRecord | undefined)[]> {
    const epoch = this.database.tableRecordsEpoch;
    if (epoch !== this.epoch) {
      this.kept.clear();
      this.epoch = epoch;
    }
    const keys = tables.map(tableKey);
    if (epoch !== undefined && keys.every((key) => this.kept.has(key)))
      return keys.map((key) => this.kept.get(key));
    const found = await this.database.dedicated((session) => findTables(session, tables));
    // Kept only when no change began or ended while they were read.
    if (epoch !== undefined && this.database.tableRecordsEpoch === epoch && this.epoch === epoch) {
      if (this.kept.size + keys.length > MAX_KEPT) this.kept.clear();
      for (const [i, key] of keys.entries()) this.kept.set(key, found[i]);
    }
    return found;
  }
}
