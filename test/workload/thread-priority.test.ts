import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { WORKER_NICENESS } from '../../src/workload/thread-priority.js';
import { startTestService } from '../support/service.js';

/** The event loop's thread outranks DuckDB's (issue 22): every other thread is made nicer. */
describe.skipIf(!fs.existsSync('/proc/self/task'))('thread priorities', () => {
  it('leave the main thread as it was and lower every other thread of a running service', async () => {
    const service = await startTestService({});
    try {
      // libuv's pool and DuckDB's workers exist once the service has started.
      const threads = fs.readdirSync('/proc/self/task').map(Number);
      expect(threads.length).toBeGreaterThan(4);
      expect(os.getPriority(process.pid)).toBeLessThan(WORKER_NICENESS);
      for (const tid of threads) {
        if (tid === process.pid) continue;
        let priority: number;
        try {
          priority = os.getPriority(tid);
        } catch {
          continue; // ended meanwhile
        }
        expect(priority, `thread ${tid}`).toBeGreaterThanOrEqual(WORKER_NICENESS);
      }
    } finally {
      await service.stop();
    }
  });
});
