import type { StatementInterrupts } from './cancel.js';
import type { Portal } from './portal.js';
import type { StatementShape, WireParameter } from './run-statement.js';

/**
 * The catalog a client inspects (pg_catalog, information_schema, version(), …), answered per
 * caller. Placeholder until the catalog emulation: no query is a catalog query.
 */
export interface CatalogCaller {
  account: { handle: string };
}

export interface CatalogQueries {
  plan(caller: CatalogCaller, text: string): Promise<{ kind: 'catalog'; sql: string } | undefined>;
  open(
    sql: string,
    parameters: readonly WireParameter[],
    formats: readonly number[],
    interrupts: StatementInterrupts,
  ): Promise<Portal>;
  describe(sql: string, interrupts: StatementInterrupts): Promise<StatementShape>;
  close(): Promise<void>;
}

/** Until the catalog emulation: nothing is a catalog query. */
export class NoCatalog implements CatalogQueries {
  async plan(): Promise<undefined> {
    return undefined;
  }
  open(): Promise<Portal> {
    throw new Error('no catalog');
  }
  describe(): Promise<StatementShape> {
    throw new Error('no catalog');
  }
  async close(): Promise<void> {}
}
