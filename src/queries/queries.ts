import type { Account } from '../auth/account.js';
import { forbidden, notFound } from '../errors.js';
import {
  AD_HOC_QUERY_ID,
  type Execution,
  hasResult,
  NO_PARAMETERS,
  SNAPSHOT_SCHEMA,
  STATES,
  snapshotTable,
  visibleState,
} from '../executions/execution.js';
import type { Executions } from '../executions/executions.js';
import type { Database, Session } from '../storage/database.js';
import { visibleTables } from '../tables/table-catalog.js';
import { TableRecordCache } from '../tables/table-record-cache.js';
import { assertBackslashesLiteral } from './parameter-backslashes.js';
import {
  checkPlaceholders,
  parameterSet,
  type QueryParameter,
  resolveValues,
  substitute,
} from './parameters.js';
import { type Query, queryFromFile } from './query.js';
import {
  assertCanCancel,
  assertCanChange,
  assertCanDeleteResult,
  assertNotArchived,
  canReadExecution,
  canSeeQuery,
  executionNotFound,
  queryNotFound,
} from './query-access.js';
import type { QueryFile } from './query-files.js';
import type {
  CreateQueryRequest,
  ExecuteQueryRequest,
  ExecuteSqlRequest,
  UpdateQueryRequest,
} from './query-request.js';
import { QueryStore } from './query-store.js';
import type { SqlChecker } from './sandbox/checker-pool.js';
import { suggestTables } from './sandbox/name-suggestions.js';
import { type SandboxedSql, sandboxSql } from './sandbox/sandbox-sql.js';
import type { WrittenTableName } from './sandbox/table-names.js';
import { type ReadableTable, type TableResolver, tableResolver } from './sandbox/table-resolver.js';
import type { CheckOptions } from './sandbox/tree-checker.js';

/**
 * Queries as the API sees them (DESIGN §10): users' saved queries and the operator's query
 * files, their parameters, and their runs. Users' SQL reaches the runner only through the
 * sandbox, with the executor's visibility; the operator's files run as they are.
 */

/** `query_<id>` in users' SQL: the latest result of that query (as on the mirrored API). */
const QUERY_RESULT_TABLE = /^query_(\d{1,15})$/i;

/** What a query's SQL reads: a table (by its record) or another query's latest result. */
export type TableRead = { queryId: number } | { namespace: string; tableName: string };

/** Where `query_<id>` points while a pipeline is planned: it is never run (nor need it exist). */
const PLANNED_RESULT = 'planned';

export class Queries {
  readonly store: QueryStore;
  /** The records of the tables users' SQL names, kept between their changes. */
  private readonly tableRecords: TableRecordCache;
  private readonly files: Map<number, Query>;
  private readonly madePrivate: ((query: Query) => Promise<void>)[] = [];

  constructor(
    private readonly database: Database,
    private readonly executions: Executions,
    files: readonly QueryFile[],
    /** The sandbox's checker, on worker threads of its own. */
    private readonly checker: SqlChecker,
  ) {
    this.store = new QueryStore(database);
    this.tableRecords = new TableRecordCache(database);
    this.files = new Map(files.map((file) => [file.id, queryFromFile(file)]));
  }

  /** A query by id, whoever may see it: an operator's file or a user's query. */
  async find(id: number, session?: Session): Promise<Query | undefined> {
    return this.files.get(id) ?? (id === AD_HOC_QUERY_ID ? undefined : this.store.get(id, session));
  }

  /** The query if `account` may see it; otherwise the 404 of a query that does not exist. */
  async visible(account: Account, id: number, session?: Session): Promise<Query> {
    const query = await this.find(id, session);
    if (!query || !canSeeQuery(account, query)) throw queryNotFound(id);
    return query;
  }

  async create(account: Account, request: CreateQueryRequest): Promise<Query> {
    if (request.isPrivate && account.plan !== 'premium')
      throw forbidden('private queries need a premium key; create it public, or use a premium key');
    checkPlaceholders(request.sql, request.parameters, 'query_sql');
    await this.checkRuns(account, request.sql, request.parameters, account.handle);
    return this.store.create({
      owner: account.handle,
      name: request.name,
      description: request.description,
      tags: request.tags,
      parameters: request.parameters,
      sql: request.sql,
      isPrivate: request.isPrivate,
    });
  }

  async update(account: Account, id: number, request: UpdateQueryRequest): Promise<Query> {
    const query = await this.changeable(account, id);
    assertNotArchived(query, 'updated');
    // Checked against the stored query now; the write below applies the same change.
    const plan = (current: Query) => {
      const parameters = request.parameters ? request.parameters(current.parameters) : current.parameters;
      const sql = request.sql ?? current.sql;
      checkPlaceholders(sql, parameters, request.sql !== undefined ? 'query_sql' : 'parameters');
      return {
        ...(request.name !== undefined ? { name: request.name } : {}),
        ...(request.description !== undefined ? { description: request.description } : {}),
        ...(request.tags !== undefined ? { tags: request.tags } : {}),
        parameters,
        sql,
      };
    };
    const planned = plan(query);
    await this.checkRuns(account, planned.sql, planned.parameters, query.owner);
    return this.store.update(id, (current) => {
      assertNotArchived(current, 'updated');
      return { ...plan(current), bumpVersion: true };
    });
  }

  async setArchived(account: Account, id: number, archived: boolean): Promise<Query> {
    await this.changeable(account, id);
    return this.store.update(id, () => ({ isArchived: archived }));
  }

  async setPrivate(account: Account, id: number, isPrivate: boolean): Promise<Query> {
    await this.changeable(account, id);
    if (isPrivate && account.plan !== 'premium') throw forbidden('private queries need a premium key');
    const query = await this.store.update(id, () => ({ isPrivate }));
    // What keeps a copy of its results (materialized views) follows its privacy.
    if (isPrivate) for (const listener of this.madePrivate) await listener(query);
    return query;
  }

  /** Called with each query made private, after it is recorded. */
  onMadePrivate(listener: (query: Query) => Promise<void>): void {
    this.madePrivate.push(listener);
  }

  listOwn(account: Account, limit: number, offset: number) {
    return this.store.listOwn(account.handle, limit, offset);
  }

  /** Runs a saved query (a user's or an operator's file) with the given parameter values. */
  async execute(account: Account, id: number, request: ExecuteQueryRequest): Promise<Execution> {
    const query = await this.visible(account, id);
    assertNotArchived(query, 'executed');
    const values = resolveValues(query.parameters, request.values, 'query_parameters');
    if (query.source === 'file') {
      // In the users' lane, as the key's own work; a run of the file waiting to start already
      // (the scheduler's, or another key's) is the same run: it reads the data as it is then.
      return (
        this.executions.waitingRun(id) ??
        this.executions.submit({ queryId: id, sql: query.sql, owner: account.handle, lane: 'users' })
      );
    }
    const sandboxed = await this.sandboxWithValues(account, query, values, 'query_parameters', query.owner);
    return this.executions.submit({
      queryId: id,
      sql: sandboxed.sql,
      owner: account.handle,
      lane: 'users',
      parameterSet: parameterSet(values),
      readsPrivate: sandboxed.readsPrivate,
    });
  }

  /** Runs ad-hoc SQL: an execution of no saved query (query_id 0), its executor's alone. */
  async executeSql(account: Account, request: ExecuteSqlRequest): Promise<Execution> {
    const sandboxed = await this.sandbox(account, request.sql);
    return this.executions.submit({
      queryId: AD_HOC_QUERY_ID,
      sql: sandboxed.sql,
      owner: account.handle,
      lane: 'users',
      readsPrivate: sandboxed.readsPrivate,
      text: request.sql,
    });
  }

  /**
   * The execution a query's latest-result request answers with, for one parameter set
   * (`params.NAME=VALUE`, defaults filling the rest): the latest with a result that the
   * caller may read, else the latest in any state (running, failed), else a 404.
   */
  async latestExecution(
    account: Account,
    id: number,
    given: ReadonlyMap<string, string>,
  ): Promise<Execution> {
    const query = await this.visible(account, id);
    const set = parameterSet(resolveValues(query.parameters, given, 'params'));
    const readable = (e: Execution) =>
      (e.parameterSet ?? NO_PARAMETERS) === set && canReadExecution(account, e, query);
    const execution =
      this.executions.latest(id, (e) => hasResult(e) && readable(e)) ?? this.executions.latest(id, readable);
    if (!execution)
      throw notFound(
        `query ${id} has no result${given.size > 0 ? ' for these parameter values' : ''} yet: execute it first`,
      );
    return execution;
  }

  /** An execution the caller may read; otherwise the 404 of one that does not exist. */
  async readableExecution(account: Account, executionId: string): Promise<Execution> {
    const execution = this.executions.get(executionId);
    if (!execution) throw executionNotFound(executionId);
    const query = await this.find(execution.queryId);
    if (!canReadExecution(account, execution, query)) throw executionNotFound(executionId);
    return execution;
  }

  /** Cancels a pending or running execution: false when it had already finished. */
  async cancel(account: Account, executionId: string): Promise<boolean> {
    const execution = this.executions.get(executionId);
    if (!execution) throw executionNotFound(executionId);
    assertCanCancel(account, execution, await this.find(execution.queryId));
    return this.executions.cancel(execution.id);
  }

  /**
   * Deletes an execution's result before its expiry (DESIGN §12): false when it has none
   * (not finished, failed, or expired already).
   */
  async deleteResult(account: Account, executionId: string): Promise<boolean> {
    const execution = this.executions.get(executionId);
    if (!execution) throw executionNotFound(executionId);
    assertCanDeleteResult(account, execution, await this.find(execution.queryId));
    return this.executions.deleteResult(execution.id);
  }

  /** The query as the caller may change it (404 when they may not see it, else 403). */
  private async changeable(account: Account, id: number): Promise<Query> {
    const query = await this.visible(account, id);
    assertCanChange(account, query);
    return query;
  }

  /** Refuses, at create and update, SQL that could not run: its defaults go through the sandbox. */
  private async checkRuns(
    account: Account,
    sql: string,
    parameters: readonly QueryParameter[],
    namespace: string,
  ): Promise<void> {
    const defaults = resolveValues(parameters, new Map(), 'parameters');
    await this.sandboxWithValues(account, { sql, parameters }, defaults, 'parameters', namespace);
  }

  /** A query's SQL with parameter values through the sandbox: each value must arrive as the text sent. */
  private sandboxWithValues(
    account: Account,
    query: { sql: string; parameters: readonly QueryParameter[] },
    values: ReadonlyMap<string, string>,
    where: string,
    namespace: string,
  ): Promise<SandboxedSql> {
    return this.database
      .read((session) => assertBackslashesLiteral(session, query.sql, query.parameters, values, where))
      .then(() => this.sandbox(account, substitute(query.sql, query.parameters, values), namespace));
  }

  /**
   * Ad-hoc SQL as `/v1/sql/execute` would run it, for the Postgres wire protocol (src/pgwire),
   * which runs it itself; with `parameters`, `$1`, `$2`, … are left for values bound at run time.
   * Throws SqlRefused (an ApiError 400) when refused.
   */
  sandboxedSql(account: Account, sql: string, options: CheckOptions = {}): Promise<SandboxedSql> {
    return this.sandbox(account, sql, account.handle, options);
  }

  /**
   * Users' SQL through the sandbox, with `account`'s visibility. An unqualified table name
   * is in `namespace`: the saved query's owner's, so that a query means the same tables
   * whoever runs it; the caller's own for ad-hoc SQL.
   *
   * The check runs on the checker's threads; only each table name it finds is looked up
   * here: in the records kept since they last changed (table-record-cache.ts), or else on a
   * connection of its own (`dedicated` never waits for one), so a check never waits behind
   * results reads holding the shared readers.
   */
  private sandbox(
    account: Account,
    sql: string,
    namespace = account.handle,
    options: CheckOptions = {},
  ): Promise<SandboxedSql> {
    const resolve: TableResolver = (names) =>
      this.resolveEach(account, names, namespace, (id) =>
        this.database.dedicated((session) => this.queryResultTable(session, account, id)),
      );
    // Only the tables `account` may see: a refusal reads the same whether a name is absent or hidden.
    resolve.suggest = (name) =>
      this.database.dedicated(async (session) =>
        suggestTables(name, await visibleTables(session, account), namespace),
      );
    return sandboxSql(this.checker, sql, resolve, options);
  }

  /**
   * The tables and `query_<id>` results a saved query's SQL reads, as DuckDB's parser finds them
   * through the sandbox (for pipelines): with `account`'s visibility, unqualified names in the
   * query's owner's namespace, and `query_<id>` counted whether or not that query has a result
   * yet. An operator's file reads no users' tables: none. Throws the sandbox's 400s.
   */
  async tablesRead(
    account: Account,
    query: Query,
    values: ReadonlyMap<string, unknown>,
  ): Promise<TableRead[]> {
    if (query.source === 'file') return [];
    const sql = substitute(
      query.sql,
      query.parameters,
      resolveValues(query.parameters, values, 'query_parameters'),
    );
    // In the order the SQL names them, as the sandbox asks them.
    const reads: TableRead[] = [];
    await sandboxSql(this.checker, sql, async (names) => {
      const answers = await this.resolveEach(account, names, query.owner, async (id) => {
        const target = await this.find(id);
        if (!target || !canSeeQuery(account, target)) return undefined;
        return { schema: SNAPSHOT_SCHEMA, table: snapshotTable(PLANNED_RESULT), isPrivate: false };
      });
      for (const [i, answer] of answers.entries()) {
        if (!answer) continue;
        const name = names[i] as WrittenTableName;
        const match = name.schema === undefined ? QUERY_RESULT_TABLE.exec(name.table) : null;
        reads.push(
          match
            ? { queryId: Number(match[1]) }
            : { namespace: name.schema ?? query.owner, tableName: name.table },
        );
      }
      return answers;
    });
    return reads;
  }

  /** What users' SQL may name: uploaded tables (the sandbox's resolver) and `query_<id>`. */
  /**
   * What each name means ([i] for `names[i]`): `query_<id>` through `queryResult`, every other
   * name a table of the catalog, all of those in one look-up; an unqualified table name is in
   * `namespace`.
   */
  private async resolveEach(
    account: Account,
    names: readonly WrittenTableName[],
    namespace: string,
    queryResult: (id: number) => Promise<ReadableTable | undefined>,
  ): Promise<(ReadableTable | undefined)[]> {
    const answers: (ReadableTable | undefined)[] = [];
    const tables: { at: number; name: WrittenTableName }[] = [];
    for (const [at, name] of names.entries()) {
      const match = name.schema === undefined ? QUERY_RESULT_TABLE.exec(name.table) : null;
      if (match) answers[at] = await queryResult(Number(match[1]));
      else tables.push({ at, name: { schema: name.schema ?? namespace, table: name.table } });
    }
    const found = await tableResolver((t) => this.tableRecords.find(t), account)(tables.map((t) => t.name));
    for (const [i, { at }] of tables.entries()) answers[at] = found[i];
    return answers;
  }

  /**
   * `query_<id>`: the snapshot of the query's latest result with its default parameters that
   * the caller may read. Reading it counts as reading a private table when the query is
   * private or its result read one, so the new result is as private as its source.
   */
  private async queryResultTable(
    session: Session,
    account: Account,
    id: number,
  ): Promise<ReadableTable | undefined> {
    const query = await this.find(id, session);
    if (!query || !canSeeQuery(account, query)) return undefined;
    const set = parameterSet(resolveValues(query.parameters, new Map(), 'parameters'));
    const execution = this.executions.latest(
      id,
      (e) =>
        hasResult(e) &&
        visibleState(e) !== STATES.expired &&
        (e.parameterSet ?? NO_PARAMETERS) === set &&
        canReadExecution(account, e, query),
    );
    if (!execution) return undefined;
    // A small result is seen before its table is written (small-result.ts).
    await this.executions.resultStored(execution.id);
    return {
      schema: SNAPSHOT_SCHEMA,
      table: snapshotTable(execution.id),
      isPrivate: query.isPrivate || execution.readsPrivate,
    };
  }
}
