import { execFile } from 'node:child_process';
import { KEYS } from './service.js';

/** Debian's psql against the test service (never execFileSync: the service runs in this process). */
export function psql(
  port: number,
  args: string[],
  options: { key?: string; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'psql',
      ['-X', '-h', '127.0.0.1', '-p', String(port), '-U', 'tester', '-d', 'dune', ...args],
      {
        env: {
          ...process.env,
          PGPASSWORD: options.key ?? KEYS.alice,
          PGCONNECT_TIMEOUT: '10',
          LC_ALL: 'C.UTF-8',
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
