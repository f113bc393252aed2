import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import { duckdbAllowedDirectories, duckdbSettings, loadConfig } from '../config/config.js';
import { type DemoSummary, loadDemoData, MAX_DEMO_SCALE } from '../demo/demo-data.js';
import { RESTAKING_NAMESPACE } from '../demo/source-tables.js';
import { DATABASE_FILE } from '../service.js';
import { Database } from '../storage/database.js';
import { migrate } from '../storage/service-schema.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';

/**
 * `demo --scale N`: fills the `restaking` source tables with the deterministic demo data
 * set, replacing what they held. It needs the database file to itself, so it refuses to
 * run while a server holds it (Database.open throws DatabaseLockedError, which the entry
 * point reports with exit code 3).
 */

function parseScale(value: string): number {
  const scale = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(scale) || scale < 1 || scale > MAX_DEMO_SCALE) {
    throw new InvalidArgumentError(`the scale must be a whole number from 1 to ${MAX_DEMO_SCALE}.`);
  }
  return scale;
}

function renderSummary(summary: DemoSummary, file: string, seconds: number): string {
  const names = Object.keys(summary.rows) as (keyof DemoSummary['rows'])[];
  const width = Math.max(...names.map((name) => name.length)) + RESTAKING_NAMESPACE.length + 1;
  const counts = names.map((name) => summary.rows[name].toLocaleString('en-US'));
  const countWidth = Math.max(...counts.map((count) => count.length));
  return [
    `Loaded the demo data set at scale ${summary.scale} into ${file} in ${seconds.toFixed(1)} s:`,
    ...names.map(
      (name, i) =>
        `  ${`${RESTAKING_NAMESPACE}.${name}`.padEnd(width)}  ${(counts[i] ?? '').padStart(countWidth)} rows`,
    ),
    `  (${summary.operators.toLocaleString('en-US')} operators, ${summary.stakers.toLocaleString('en-US')} stakers)`,
  ].join('\n');
}

async function loadDemo(options: { scale: number; dataDir?: string }): Promise<void> {
  const config = loadConfig(environmentWithFlags(options));
  fs.mkdirSync(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, DATABASE_FILE);
  const database = await Database.open({
    path: file,
    settings: duckdbSettings(config),
    allowedDirectories: duckdbAllowedDirectories(config),
  });
  const bar = new cliProgress.SingleBar(
    { format: 'demo data [{bar}] {percentage}% | {stage}', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  const started = performance.now();
  try {
    await migrate(database);
    bar.start(1, 0, { stage: 'starting' });
    const summary = await loadDemoData(database, {
      scale: options.scale,
      onProgress: (done, total, stage) => {
        bar.setTotal(total);
        bar.update(done, { stage });
      },
    });
    bar.stop();
    process.stdout.write(`${renderSummary(summary, file, (performance.now() - started) / 1000)}\n`);
  } finally {
    bar.stop();
    await database.close();
  }
}

export function addDemoCommand(program: Command): void {
  addConfigFlags(
    program
      .command('demo')
      .description('load the demo restaking data set into the restaking.* tables (replacing them)')
      .option(
        '--scale <n>',
        `size of the data set, 1 to ${MAX_DEMO_SCALE}: 1 is 40 AVSs, 300 operators, 10,000 stakers; the rest grows linearly`,
        parseScale,
        1,
      ),
    ['DATA_DIR'],
  ).action(loadDemo);
}
