import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A process must not exit while a worker thread of the sandbox is inside a DuckDB call: the
 * addon then aborts the whole process (exit code 134, "terminate called after throwing an
 * instance of 'Napi::Error'"; docs/library-notes.md). SqlChecker.close lets the check end and
 * the worker close its DuckDB first; the service closes it before exiting, even when cut
 * short (src/cli/serve-command.ts). Measured without the close (`exit-now`), the same script
 * aborted at 50 and 400 ms and exited 0 at 150 ms.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(import.meta.dirname, 'support', 'exit-while-checking.ts');

function exitCode(delayMs: number): Promise<number | string> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(delayMs), 'close-first'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? '?')));
}

describe('exiting while the sandbox checks SQL', () => {
  it.each([50, 150, 400])(
    '%i ms into a check: the checker closed first, the process exits 0',
    async (delay) => {
      expect(await exitCode(delay)).toBe(0);
    },
  );
});
