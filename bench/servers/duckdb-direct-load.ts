import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

/**
 * The baseline of the ingest benchmark: DuckDB loading a CSV file straight into a table
 * of a fresh database file, with its own type detection. Prints {ms, rss} (peak RSS).
 */
const [csvFile, databaseFile] = process.argv.slice(2) as [string, string];
const instance = await DuckDBInstance.create(databaseFile);
const connection = await instance.connect();
const started = performance.now();
await connection.run('CREATE TABLE t AS SELECT * FROM read_csv(?)', [csvFile]);
const ms = performance.now() - started;
connection.closeSync();
instance.closeSync();
const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
for (const suffix of ['', '.wal']) fs.rmSync(databaseFile + suffix, { force: true });
console.log(JSON.stringify({ ms, rss: Number(hwm) * 1024 }));
