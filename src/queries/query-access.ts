import type { Account } from '../auth/account.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { AD_HOC_QUERY_ID, type Execution, OPERATOR } from '../executions/execution.js';
import type { Query } from './query.js';

/**
 * Who may see and change a query, and read or cancel an execution (DESIGN §10). What a
 * caller may not see answers the same 404 as what does not exist.
 */

export const queryNotFound = (id: number | string) => notFound(`no query with id ${String(id).slice(0, 40)}`);

export const executionNotFound = (id: string) =>
  notFound(`no execution with id ${JSON.stringify(id.slice(0, 64))}`);

/** Whether the account is `owner`; no key is the operator, whatever handle it was given. */
const isOwner = (account: Account, owner: string) => owner === account.handle && owner !== OPERATOR;

/** Public queries and the operator's files are everyone's; a private one its owner's (and admins'). */
export function canSeeQuery(account: Account, query: Query): boolean {
  return !query.isPrivate || isOwner(account, query.owner) || account.admin;
}

/** Only the owner or an admin changes a user's query; nobody changes the operator's files. */
export function assertCanChange(account: Account, query: Query): void {
  if (query.source === 'file')
    throw forbidden(
      `query ${query.id} is one of the operator's query files: it cannot be changed through the API`,
    );
  if (!isOwner(account, query.owner) && !account.admin)
    throw forbidden(`query ${query.id} belongs to ${query.owner}: only its owner changes it`);
}

export function assertNotArchived(query: Query, action: string): void {
  if (query.isArchived)
    throw badRequest(`query ${query.id} is archived: it cannot be ${action}; unarchive it first`);
}

/**
 * An execution is its owner's; it is also readable by everyone who may see its query, unless
 * it read a private table. Ad-hoc SQL has no query anyone else could see.
 */
export function canReadExecution(account: Account, execution: Execution, query: Query | undefined): boolean {
  if (isOwner(account, execution.owner)) return true;
  if (execution.readsPrivate || execution.queryId === AD_HOC_QUERY_ID || !query) return false;
  return canSeeQuery(account, query);
}

/**
 * Cancel: the execution's owner, its query's owner, or an admin (the scheduler's runs are
 * the operator's, so only admins cancel those). Others get 403, or 404 where they may not
 * read the execution at all.
 */
export function assertCanCancel(account: Account, execution: Execution, query: Query | undefined): void {
  assertCanManage(account, execution, query, 'cancel it');
}

/** Deleting a result before its expiry: the same people as cancel. */
export function assertCanDeleteResult(
  account: Account,
  execution: Execution,
  query: Query | undefined,
): void {
  assertCanManage(account, execution, query, 'delete its result');
}

function assertCanManage(
  account: Account,
  execution: Execution,
  query: Query | undefined,
  action: string,
): void {
  if (account.admin) return;
  if (!canReadExecution(account, execution, query)) throw executionNotFound(execution.id);
  if (isOwner(account, execution.owner)) return;
  if (query?.source === 'user' && isOwner(account, query.owner)) return;
  throw forbidden(
    `execution ${execution.id} was started by ${execution.owner}: only they, the query's owner or an admin may ${action}`,
  );
}
