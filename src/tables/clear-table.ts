import type { Account } from '../auth/account.js';
import type { Database } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';
import { assertCanWrite, findVisibleTable, type TableRef } from './table-access.js';
import { recordCleared } from './table-catalog.js';
import { createDeclaredTable } from './table-schema.js';
import { recordUnversioned, recordVersion, type VersionPolicy, versionTableName } from './table-versions.js';

/**
 * Removes every row and keeps the table, its schema and its record, in one transaction. With
 * versions kept, the table itself becomes the previous version (a rename) and an empty one of
 * the same schema takes its place.
 */
export async function clearTable(
  database: Database,
  account: Account,
  ref: TableRef,
  policy: VersionPolicy,
): Promise<void> {
  assertCanWrite(account, ref.namespace);
  await database.write(async (session) => {
    const before = await findVisibleTable(session, account, ref);
    const target = qualifiedName(ref.namespace, ref.tableName);
    if (policy.kept === 0) {
      await session.run(`DELETE FROM ${target}`);
      await recordCleared(session, ref, new Date());
      await recordUnversioned(session, ref, before, 'clear');
      return;
    }
    const kept = versionTableName();
    await session.run(`ALTER TABLE ${target} RENAME TO ${quoteIdentifier(kept)}`);
    if (before.declaredColumns) {
      await createDeclaredTable(session, ref.namespace, ref.tableName, before.declaredColumns);
    } else {
      await session.run(
        `CREATE TABLE ${target} AS SELECT * FROM ${qualifiedName(ref.namespace, kept)} LIMIT 0`,
      );
    }
    await recordCleared(session, ref, new Date());
    await recordVersion(session, ref, policy, before, 'clear', { kind: 'snapshot', data: kept });
  });
}
