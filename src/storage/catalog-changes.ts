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

/**
 * A write of the table records, anywhere in a statement's text: every such statement of the
 * service has this form. A user's SQL that holds such words (in a string, say) counts as a
 * change while it runs: the records are then looked up as if nothing were kept, never wrongly.
 */
const WRITES_RECORDS = new RegExp(
  `\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|ALTER\\s+TABLE|(CREATE|DROP)\\s+TABLE(\\s+IF\\s+(NOT\\s+)?EXISTS)?)\\s+"?${SERVICE_SCHEMA}"?\\."?tables\\b`,
  'i',
);

/** Whether a statement may change the table records. */
export function changesTableRecords(sql: string): boolean {
  return WRITES_RECORDS.test(sql);
}
