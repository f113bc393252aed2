import fs from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { Database } from '../../storage/database.js';
import type { FromWorker, ToWorker } from './messages.js';
import { SqlRefusal } from './refusals.js';
import { SqlCheck } from './sql-check.js';

/**
 * A worker thread of the sandbox's checker (checker-pool.ts): checks users' SQL off the
 * service's event loop, on a DuckDB of its own. Parsing (`json_serialize_sql`) and writing
 * back (`json_deserialize_sql`) need no tables, so this in-memory database, locked down like
 * the service's (no file, no extension, no setting can change), is the same parser as the
 * one that runs the SQL: the same library, its default parser settings. Only the table names
 * go back to the service, which resolves them against its catalog.
 *
 * One check at a time: the pool sends the next when this one has answered.
 */

const SETTINGS = {
  // Each call is one scalar over one row: nothing for more threads to do.
  threads: '1',
  memory_limit: '512MB',
};

/**
 * Lowers this thread's scheduling priority to nice 10 (Linux keeps one per thread), so that
 * when the cores are busy the event loop's thread gets one first. Measured with
 * bench/sandbox-load.ts (one worker, 8 clients of 64 KiB texts, load average 11–13 from other
 * work), four runs each, alternating: /health p99 47, 59, 29, 21 ms against 88, 69, 56, 27 ms
 * without it; checks answered 52–87 against 53–100 per run. (libuv's pool threads, which run
 * this thread's DuckDB calls, belong to the process and keep its priority.)
 */
function yieldToTheEventLoop(): void {
  try {
    const thread = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(thread)) os.setPriority(thread, 10);
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('check-worker.ts runs as a worker thread');
  yieldToTheEventLoop();
  const database = await Database.open({
    path: ':memory:',
    catalogReaders: 1,
    resultReaders: 0,
    settings: SETTINGS,
    allowedDirectories: [],
  });
  const waiting = new Map<number, SqlCheck>();
  const send = (message: FromWorker) => port.postMessage(message);

  const settle = async (id: number, work: () => Promise<FromWorker>) => {
    try {
      send(await work());
    } catch (error) {
      if (error instanceof SqlRefusal) {
        const { message, location, unit, kind } = error;
        send({ type: 'refused', id, refusal: { message, location, unit, kind } });
      } else {
        send({ type: 'failed', id, message: (error as Error).stack ?? String(error) });
      }
    }
  };

  port.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'check':
        void settle(message.id, async () => {
          const check = await database.read((session) =>
            SqlCheck.begin(session, message.sql, message.options),
          );
          const tables = check.tables;
          if (tables.length === 0) {
            return { type: 'done', id: message.id, sql: await database.read((s) => check.finish(s, [])) };
          }
          waiting.set(message.id, check);
          return { type: 'tables', id: message.id, tables };
        });
        return;
      case 'resolved': {
        const check = waiting.get(message.id);
        waiting.delete(message.id);
        void settle(message.id, async () => {
          if (!check) throw new Error(`no check ${message.id} is waiting for its tables`);
          return {
            type: 'done',
            id: message.id,
            sql: await database.read((s) => check.finish(s, message.targets)),
          };
        });
        return;
      }
      case 'abandon':
        waiting.delete(message.id);
        return;
      case 'close':
        void database.close().then(() => port.close());
        return;
    }
  });
  send({ type: 'ready' });
}

// No top-level await: the single-file build bundles this file as CommonJS.
main().catch((error: unknown) => {
  // Uncaught: the pool sees the worker end with this error before it was ready.
  process.nextTick(() => {
    throw error;
  });
});
