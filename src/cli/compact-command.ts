import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { duckdbSettings, loadConfig } from '../config/config.js';
import { DATABASE_FILE } from '../service.js';
import { Database } from '../storage/database.js';
import { quoteIdentifier, quoteLiteral } from '../storage/sql.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';
import { CliError, EXIT } from './exit-codes.js';
import type { ProgramOutput } from './program-output.js';

/**
 * `compact`: gives the disk back the space of dropped tables and expired results. DuckDB
 * reuses the blocks they freed for new data, and a checkpoint cuts free blocks off the file's
 * end, but a file never shrinks past a block still in use (README, Operations). Here the
 * whole database is copied into a new file, which holds only what is in use, and the new
 * file takes the old one's place. It needs the database file to itself (exit code 3 while a
 * server holds it) and room for the copy.
 */

const COPY_SUFFIX = '.compacting';

function size(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

async function compact(options: { dataDir?: string }, output: ProgramOutput): Promise<void> {
  const config = loadConfig(environmentWithFlags(options));
  const file = path.join(config.dataDir, DATABASE_FILE);
  if (!fs.existsSync(file)) throw new CliError(`no database at ${file}: nothing to compact`, EXIT.failure);
  const copy = `${file}${COPY_SUFFIX}`;
  fs.rmSync(copy, { force: true });
  const database = await Database.open({ path: file, settings: duckdbSettings(config) });
  const before = size(file) + size(`${file}.wal`);
  const started = performance.now();
  try {
    await database.checkpoint();
    const [row] = await database.read((s) => s.all<{ name: string }>('SELECT current_database() AS name'));
    const source = quoteIdentifier(row?.name ?? 'warehouse');
    // COPY FROM DATABASE runs outside a transaction of ours: on the writer, in its own.
    await database.outsideTransaction(async (session) => {
      await session.run(`ATTACH ${quoteLiteral(copy)} AS compacted`);
      try {
        await session.run(`COPY FROM DATABASE ${source} TO compacted`);
        // Into the file itself: nothing of the copy may stay in a WAL beside it.
        await session.run('CHECKPOINT compacted');
      } finally {
        await session.run('DETACH compacted');
      }
    });
  } catch (error) {
    fs.rmSync(copy, { force: true });
    throw error;
  } finally {
    await database.close();
  }
  if (fs.existsSync(`${copy}.wal`)) {
    fs.rmSync(copy, { force: true });
    throw new CliError(
      'the copy could not be completed (its write-ahead log was left); nothing was changed',
      EXIT.failure,
    );
  }
  fs.rmSync(`${file}.wal`, { force: true });
  fs.renameSync(copy, file);
  const after = size(file);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  output.writeOut(`Compacted ${file} from ${mb(before)} to ${mb(after)} in ${seconds} s\n`);
}

export function addCompactCommand(program: Command, output: ProgramOutput): void {
  addConfigFlags(
    program
      .command('compact')
      .description('copy the database into a new file holding only what is in use (no server may hold it)'),
    ['DATA_DIR'],
  ).action((options) => compact(options, output));
}
