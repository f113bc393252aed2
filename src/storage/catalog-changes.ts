import { SERVICE_SCHEMA } from './service-schema.js';

/**
 * When the service's table records (`_service.tables`) last changed, for what keeps their
 * answers in memory (src/tables/table-record-cache.ts). Every statement that writes them, on
 * whichever connection (the writer, a dedicated connection), is seen by its session
 * (session.ts): from its start until its transaction ends the records are changing, and
 * nothing kept may be trusted; the epoch moves at both ends, so an answer read while a change
 * was under way is never taken for a current one.
 */
export class CatalogChanges {
  private counter = 0;
  private open = 0;

  /** Moves with every change; undefined while one may not be committed yet. */
  get epoch(): number | undefined {
    return this.open > 0 ? undefined : this.counter;
  }

  began(): void {
    this.open++;
    this.counter++;
  }

  ended(): void {
    this.open = Math.max(0, this.open - 1);
    this.counter++;
  }
}

const RECORDS = `${SERVICE_SCHEMA}.tables`;

/** Whether a statement may change the table records: any that names them and is not a read. */
export function changesTableRecords(sql: string): boolean {
  return sql.includes(RECORDS) && !/^\s*(SELECT|WITH|DESCRIBE|SHOW)\b/i.test(sql);
}
