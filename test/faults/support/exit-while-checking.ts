import { SqlChecker } from '../../../src/queries/sandbox/checker-pool.js';

/**
 * A process that exits while the sandbox's worker is checking a large query, in one of two
 * ways (argv[3]): `close-first` closes the checker first (SqlChecker.close, as the service
 * does), `exit-now` exits at once. Run by test/faults/check-worker-exit.test.ts; argv[2] is
 * how long into the check to exit, in milliseconds.
 */

const noTables = async () => [];
// 64 KiB of decimals, each a column the sandbox names: most of the check is DuckDB writing them.
const sql = `SELECT ${Array(13_000).fill('1.5').join(', ')}`;

const checker = new SqlChecker({ workers: 1, maxWaiting: 10, maxWaitMs: 60_000 });
await checker.check('SELECT 1', noTables);
void checker.check(sql, noTables).catch(() => undefined);
await new Promise((resolve) => setTimeout(resolve, Number(process.argv[2])));
if (process.argv[3] === 'close-first') await checker.close(5_000);
process.exit(0);
