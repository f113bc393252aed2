// A stand-in for the sandbox's check worker (src/queries/sandbox/check-worker.ts): the same
// messages, no DuckDB, and on demand the failures the real one cannot be made to have when a
// test wants them. The SQL says what to do: `exit` ends the worker, `throw` throws in it,
// `hang` is never answered, `oom` allocates until V8's limit; `tables` names one table and
// answers with the table it was resolved to; any other SQL is answered as it came.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (message) => {
  if (message.type === 'close') {
    parentPort.close();
    return;
  }
  if (message.type === 'resolved') {
    const [target] = message.targets;
    parentPort.postMessage({
      type: 'done',
      id: message.id,
      sql: `SELECT * FROM ${target.schema}.${target.table}`,
    });
    return;
  }
  if (message.type !== 'check') return;
  switch (message.sql) {
    case 'exit':
      process.exit(3);
      break;
    case 'throw':
      throw new Error('a bug in the worker');
    case 'hang':
      return;
    case 'oom': {
      const kept = [];
      for (;;) kept.push(new Array(1_000_000).fill(kept.length));
    }
    case 'tables': {
      const name = { schema: 'alice', table: 't' };
      parentPort.postMessage({
        type: 'tables',
        id: message.id,
        tables: [{ written: name, folded: name, location: 14 }],
      });
      return;
    }
    default:
      parentPort.postMessage({ type: 'done', id: message.id, sql: message.sql });
  }
});
parentPort.postMessage({ type: 'ready' });
