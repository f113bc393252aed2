/**
 * Preloaded into the load test's server (NODE_OPTIONS=--import): on SIGUSR2 it runs a full
 * garbage collection and writes the process's memory to stderr as one line, so the load
 * test can compare the memory still referenced, which garbage awaiting the collector and
 * the heap's own sizing do not blur the way they blur RSS. Plain JavaScript: NODE_OPTIONS
 * imports run before tsx is registered. The service itself knows nothing of it.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

process.on('SIGUSR2', () => {
  gc();
  // Array buffers are freed by a second pass once their owners are gone.
  setImmediate(() => {
    gc();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    process.stderr.write(
      `memory-probe ${JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers })}\n`,
    );
  });
});
