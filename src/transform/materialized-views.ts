import type { Account } from '../auth/account.js';
import { conflict, forbidden, notFound } from '../errors.js';
import { type Execution, isFinished, STATES } from '../executions/execution.js';
import type { Executions } from '../executions/executions.js';
import type { Logger } from '../log.js';
import type { Queries } from '../queries/queries.js';
import type { Query } from '../queries/query.js';
import { assertNotArchived } from '../queries/query-access.js';
import type { Database } from '../storage/database.js';
import { findTable } from '../tables/table-catalog.js';
import { nextRunAfter } from './cron-schedule.js';
import { type ViewRef, viewFullName } from './view-name.js';
import type { UpsertViewRequest } from './view-request.js';
import {
  deleteView,
  LAST_EXECUTIONS,
  loadViews,
  type Performance,
  saveView,
  type ViewRecord,
} from './view-store.js';
import { dropViewTable, ensureNamespace, replaceViewRows, setViewTablesPrivate } from './view-table.js';

/**
 * Materialized views (Dune's five endpoints): a saved query's latest complete result kept as a
 * table, `<namespace>.<name>` in SQL and `dune.<namespace>.<name>` by its full name, refreshed
 * on its cron schedule (view-scheduler.ts), when asked, or by a pipeline. A refresh is an
 * ordinary execution of the query in the users' lane under the view's owner's key (its slots,
 * queue bound and storage quotas), read with the owner's rights; once it completes, its rows
 * replace the table's in one transaction (view-table.ts). A refresh that fails or ends partial
 * leaves the table as it was, with the reason on the view. The table is private when asked, when
 * its query is (or becomes) private, or when its result read a private table.
 */

export interface View extends ViewRecord {
  /** The table's privacy (what it will have, before its first refresh). */
  isPrivate: boolean;
  rowCount?: number;
  sizeBytes?: number;
}

export interface RefreshOutcome {
  execution: Execution;
  /** Whether the table took the execution's rows. */
  replaced: boolean;
  error?: string;
}

export interface Refresh {
  execution: Execution;
  /** Settles once the table has the rows, or the refresh failed (never rejects). */
  done: Promise<RefreshOutcome>;
}

export interface MaterializedViewsOptions {
  /** The owner's account now, for refreshes nobody asked for (the schedule). */
  accountFor: (handle: string) => Account | undefined;
}

const keyOf = (ref: ViewRef) => `${ref.namespace}\u0000${ref.name}`;

export const viewNotFound = (given: string) =>
  notFound(`no materialized view named ${JSON.stringify(given.slice(0, 200))}`);

export class MaterializedViews {
  private readonly views = new Map<string, View>();
  /** Refreshes running, by execution id. */
  private readonly refreshing = new Map<string, { key: string; settle: (o: RefreshOutcome) => void }>();
  /** Each view's changes, one at a time (swap, record, delete). */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly database: Database,
    private readonly executions: Executions,
    private readonly queries: Queries,
    private readonly logger: Logger,
    private readonly options: MaterializedViewsOptions,
  ) {
    // A refresh that completed replaces the view's rows before its execution is seen completed;
    // one that did not is told to the view once it has ended.
    executions.beforeSeen((execution) => this.completed(execution));
    executions.onFinished((execution) => this.finished(execution));
    queries.onMadePrivate((query) => this.followPrivacy(query));
  }

  async open(): Promise<void> {
    for (const loaded of await loadViews(this.database)) {
      const { table, ...record } = loaded;
      this.views.set(keyOf(record), {
        ...record,
        isPrivate: table?.isPrivate ?? record.requestedPrivate,
        ...(table ? { rowCount: table.rowCount, sizeBytes: table.sizeBytes } : {}),
      });
    }
  }

  /** The view at this table name, whoever may see it. */
  at(ref: ViewRef): View | undefined {
    return this.views.get(keyOf(ref));
  }

  /** The view if `account` may see it; else the 404 of one that does not exist. */
  visible(account: Account, ref: ViewRef | undefined, given: string): View {
    const view = ref && this.views.get(keyOf(ref));
    if (!view || !canSeeView(account, view)) throw viewNotFound(given);
    return view;
  }

  /** The account's own views, by name. */
  listOwn(account: Account, limit: number, offset: number): { views: View[]; total: number } {
    const own = [...this.views.values()]
      .filter((v) => v.namespace === account.handle)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    return { views: own.slice(offset, offset + limit), total: own.length };
  }

  /** Creates the view, or changes the one of that name materializing the same query; then refreshes it. */
  async upsert(
    account: Account,
    request: UpsertViewRequest,
    now: Date,
  ): Promise<{ view: View; refresh: Refresh }> {
    const query = await this.queries.visible(account, request.queryId);
    assertNotArchived(query, 'materialized');
    if (request.isPrivate && account.plan !== 'premium')
      throw forbidden(
        'private materialized views need a premium key; create it public, or use a premium key',
      );
    const ref = { namespace: account.handle, name: request.name };
    const view = await this.serially(ref, async () => {
      const existing = this.views.get(keyOf(ref));
      if (existing && existing.queryId !== request.queryId)
        throw conflict(
          `materialized view ${viewFullName(ref)} keeps the result of query ${existing.queryId}, not ${request.queryId}: delete it first, or choose another name`,
        );
      if (!existing && (await this.database.read((s) => findTable(s, ref.namespace, ref.name))))
        throw conflict(`a table named ${ref.namespace}.${ref.name} exists already; choose another name`);
      const next: View = {
        ...(existing ?? { lastExecutionIds: [], createdAt: now }),
        ...ref,
        queryId: request.queryId,
        performance: request.performance,
        requestedPrivate: request.isPrivate,
        isPrivate: (existing?.isPrivate ?? false) || request.isPrivate || query.isPrivate,
        updatedAt: now,
      };
      delete next.cronExpression;
      delete next.nextRefreshAt;
      delete next.expiresAt;
      if (request.schedule) {
        next.cronExpression = request.schedule.expression;
        next.nextRefreshAt = request.schedule.nextAfter(now);
      }
      if (request.expiresAt) next.expiresAt = request.expiresAt;
      await this.database.write(async (s) => {
        await saveView(s, next);
        if (existing && next.isPrivate && !existing.isPrivate) await setViewTablesPrivate(s, [next]);
      });
      this.views.set(keyOf(ref), next);
      return next;
    });
    return { view, refresh: await this.startRefresh(view, account, request.performance) };
  }

  /** A refresh asked for by `account`, who must own the view (or be an admin). */
  async refresh(account: Account, view: View, performance: Performance): Promise<Refresh> {
    assertCanManage(account, view, 'refresh it');
    return this.startRefresh(view, this.options.accountFor(view.namespace) ?? account, performance);
  }

  async remove(account: Account, view: View): Promise<void> {
    assertCanManage(account, view, 'delete it');
    await this.serially(view, async () => {
      await this.database.write(async (s) => {
        await dropViewTable(s, view);
        await deleteView(s, view);
      });
      this.views.delete(keyOf(view));
    });
  }

  /**
   * Runs the views whose scheduled time has come (a view whose refresh still runs skips that
   * time) and removes the views past their `expires_at`. Called by the scheduler's clock.
   */
  async runDue(now: Date): Promise<void> {
    for (const view of [...this.views.values()]) {
      if (view.expiresAt && view.expiresAt.getTime() <= now.getTime()) {
        await this.expire(view);
        continue;
      }
      if (!view.cronExpression || !view.nextRefreshAt || view.nextRefreshAt.getTime() > now.getTime())
        continue;
      const next = { ...view, nextRefreshAt: nextRunAfter(view.cronExpression, now) };
      await this.record(next);
      if (this.isRefreshing(view)) continue;
      const owner = this.options.accountFor(view.namespace);
      if (!owner) {
        await this.record({ ...next, lastError: `no key of ${view.namespace} is left to refresh it with` });
        continue;
      }
      await this.startRefresh(next, owner, view.performance).catch((error: unknown) =>
        this.record({ ...next, lastError: (error as Error).message }),
      );
    }
  }

  /** Refuses a change through the tables API to a view's table (it changes only by refreshes). */
  assertNotView(ref: { namespace: string; tableName: string }): void {
    if (this.views.has(keyOf({ namespace: ref.namespace, name: ref.tableName })))
      throw conflict(
        `table ${ref.namespace}.${ref.tableName} is a materialized view: it changes only by its refreshes; delete it with DELETE /v1/materialized-views/dune.${ref.namespace}.${ref.tableName}`,
      );
  }

  private isRefreshing(ref: ViewRef): boolean {
    const key = keyOf(ref);
    for (const waiting of this.refreshing.values()) if (waiting.key === key) return true;
    return false;
  }

  /** Submits the view's query as `runAs`'s run and notes it on the view. */
  private async startRefresh(view: View, runAs: Account, performance: Performance): Promise<Refresh> {
    const execution = await this.queries.execute(runAs, view.queryId, { values: new Map(), performance });
    let settle: (outcome: RefreshOutcome) => void = () => {};
    const done = new Promise<RefreshOutcome>((resolve) => {
      settle = resolve;
    });
    this.refreshing.set(execution.id, { key: keyOf(view), settle });
    await this.serially(view, async () => {
      const current = this.views.get(keyOf(view));
      if (!current) return;
      const ids = [execution.id, ...current.lastExecutionIds.filter((id) => id !== execution.id)];
      await this.saveRecord({ ...current, lastExecutionIds: ids.slice(0, LAST_EXECUTIONS) });
    }).catch((error: unknown) => this.logger.warn({ err: error }, 'could not note a refresh on its view'));
    const now = this.executions.get(execution.id);
    if (now && isFinished(now)) this.finished(now);
    return { execution, done };
  }

  /** A refresh that completed: its rows replace the view's, before the execution is seen. */
  private async completed(execution: Execution): Promise<void> {
    const waiting = this.refreshing.get(execution.id);
    if (!waiting) return;
    this.refreshing.delete(execution.id);
    waiting.settle(
      await this.takeResult(waiting.key, execution).catch((error: unknown) => ({
        execution,
        replaced: false,
        error: (error as Error).message,
      })),
    );
  }

  private finished(execution: Execution): void {
    const waiting = this.refreshing.get(execution.id);
    if (!waiting) return;
    this.refreshing.delete(execution.id);
    this.takeResult(waiting.key, execution).then(waiting.settle, (error: unknown) =>
      waiting.settle({ execution, replaced: false, error: (error as Error).message }),
    );
  }

  /** The refresh ended: its rows replace the table's, or the view says why not. */
  private async takeResult(key: string, execution: Execution): Promise<RefreshOutcome> {
    const known = this.views.get(key);
    if (!known) return { execution, replaced: false, error: 'the view was deleted' };
    return this.serially(known, async () => {
      const view = this.views.get(key);
      if (!view) return { execution, replaced: false, error: 'the view was deleted' };
      const error = refreshError(execution);
      if (error) {
        await this.saveRecord({ ...view, lastError: error });
        return { execution, replaced: false, error };
      }
      const query = await this.queries.find(view.queryId);
      const isPrivate = view.requestedPrivate || Boolean(query?.isPrivate) || execution.readsPrivate;
      if (view.refreshedAt === undefined) await ensureNamespace(this.database, view.namespace);
      const next: View = {
        ...view,
        isPrivate,
        refreshedAt: execution.endedAt ?? new Date(),
        rowCount: execution.rowCount ?? 0,
        sizeBytes: execution.resultBytes ?? 0,
      };
      delete next.lastError;
      try {
        const description = `materialized view of query ${view.queryId}`;
        // A small result's table is written as its run is seen (small-result.ts).
        await this.executions.resultStored(execution.id);
        await replaceViewRows(this.database, { ...view, description, isPrivate }, execution, (s) =>
          saveView(s, next),
        );
      } catch (failure) {
        const message = `the result could not be copied into the view: ${(failure as Error).message.split('\n')[0]}`;
        await this.saveRecord({ ...view, lastError: message });
        return { execution, replaced: false, error: message };
      }
      this.views.set(key, next);
      this.logger.info(
        { view: viewFullName(view), executionId: execution.id },
        'materialized view refreshed',
      );
      return { execution, replaced: true };
    });
  }

  /** A query made private makes the tables of its views private at once. */
  private async followPrivacy(query: Query): Promise<void> {
    const views = [...this.views.values()].filter((v) => v.queryId === query.id && !v.isPrivate);
    if (views.length === 0) return;
    await this.database.write((s) => setViewTablesPrivate(s, views));
    for (const view of views) {
      const current = this.views.get(keyOf(view));
      if (current) this.views.set(keyOf(view), { ...current, isPrivate: true });
    }
  }

  private async expire(view: View): Promise<void> {
    await this.serially(view, async () => {
      await this.database.write(async (s) => {
        await dropViewTable(s, view);
        await deleteView(s, view);
      });
      this.views.delete(keyOf(view));
    });
    this.logger.info({ view: viewFullName(view) }, 'materialized view expired');
  }

  private record(view: View): Promise<void> {
    return this.serially(view, () => this.saveRecord(view));
  }

  /** Writes the record of a view that still exists (inside its chain). */
  private async saveRecord(view: View): Promise<void> {
    const current = this.views.get(keyOf(view));
    if (!current) return;
    const next: View = { ...view, isPrivate: current.isPrivate };
    await this.database.write((s) => saveView(s, next));
    this.views.set(keyOf(view), next);
  }

  private serially<T>(ref: ViewRef, work: () => Promise<T>): Promise<T> {
    const key = keyOf(ref);
    const result = (this.chains.get(key) ?? Promise.resolve()).then(work, work);
    const tail = result.catch(() => undefined);
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return result;
  }
}

export function canSeeView(account: Account, view: View): boolean {
  return account.admin || view.namespace === account.handle || !view.isPrivate;
}

/** Only its owner (or an admin) refreshes or deletes a view; others get 403 (404 if they may not see it). */
function assertCanManage(account: Account, view: View, action: string): void {
  if (account.admin || view.namespace === account.handle) return;
  throw forbidden(
    `materialized view ${viewFullName(view)} belongs to ${view.namespace}: only its owner may ${action}`,
  );
}

/** Why a finished refresh cannot replace the table, or undefined when it can. */
function refreshError(execution: Execution): string | undefined {
  if (execution.state === STATES.completed) return undefined;
  if (execution.state === STATES.completedPartial)
    return 'the result was cut (MAX_RESULT_ROWS or MAX_RESULT_BYTES): a view keeps complete results only';
  return execution.error?.message ?? `the refresh ended ${execution.state}`;
}
