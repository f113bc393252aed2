import os from 'node:os';
import { runAnalyticsBenchmark } from './analytics.js';
import { type BenchRow, renderTable } from './bench-table.js';
import { runMetricsRefreshBenchmark } from './metrics-refresh.js';
import { runPgwireBenchmark } from './pgwire.js';
import { runQueriesBenchmark } from './queries.js';
import { runQuotaFloodBenchmark } from './quota-flood.js';
import { runSandboxBenchmark } from './sandbox.js';
import { runSandboxLoadBenchmark } from './sandbox-load.js';
import { runServingBenchmark } from './serving.js';
import { runTableChangesBenchmark } from './table-changes.js';
import { runTableInsertBenchmark } from './table-insert.js';
import { runTeamDayBenchmark } from './team-day.js';
import { runUploadBenchmark } from './upload.js';
import { runWholeResultsBenchmark } from './whole-results.js';
import { runWorkspaceBenchmark } from './workspace-page.js';

/**
 * `npm run bench`: every benchmark of the project, one after the other, then one table.
 * Each compares against a baseline measured in the same run on this machine. Pick some
 * with `npm run bench -- upload serving` (names: upload, insert, serving, refresh, sandbox, queries, whole-results, workspace, team, pgwire, changes, analytics, quota).
 */

const BENCHMARKS: Record<string, () => Promise<BenchRow[]>> = {
  upload: () => runUploadBenchmark(),
  insert: async () => {
    const { runs: _runs, ...row } = await runTableInsertBenchmark({
      log: (line) => process.stderr.write(`insert: ${line}\n`),
    });
    return [row];
  },
  changes: () => runTableChangesBenchmark((line) => process.stderr.write(`changes: ${line}\n`)),
  serving: () => runServingBenchmark(),
  refresh: () => runMetricsRefreshBenchmark(),
  sandbox: async () => [
    ...(await runSandboxBenchmark()),
    ...(await runSandboxLoadBenchmark((line) => process.stderr.write(`sandbox: ${line}\n`))),
  ],
  workspace: () => runWorkspaceBenchmark(),
  queries: () => runQueriesBenchmark((line) => process.stderr.write(`queries: ${line}\n`)),
  'whole-results': () => runWholeResultsBenchmark((line) => process.stderr.write(`whole-results: ${line}\n`)),
  pgwire: () => runPgwireBenchmark((line) => process.stderr.write(`pgwire: ${line}\n`)),
  team: () => runTeamDayBenchmark((line) => process.stderr.write(`team: ${line}\n`)),
  analytics: () => runAnalyticsBenchmark((line) => process.stderr.write(`analytics: ${line}\n`)),
  quota: () => runQuotaFloodBenchmark((line) => process.stderr.write(`quota: ${line}\n`)),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((name) => !(name in BENCHMARKS));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown benchmark ${unknown.join(', ')}; choose from ${Object.keys(BENCHMARKS).join(', ')}\n`,
  );
  process.exit(2);
}

const rows: BenchRow[] = [];
const started = Date.now();
for (const name of wanted.length > 0 ? wanted : Object.keys(BENCHMARKS)) {
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await (BENCHMARKS[name] as () => Promise<BenchRow[]>)()));
}
const [load] = os.loadavg();
console.log(
  `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `Node ${process.version}, load average at end ${load?.toFixed(2)}, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
console.log(renderTable(rows));
