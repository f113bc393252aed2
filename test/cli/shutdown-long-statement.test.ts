import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ChildService, childServicesOfThisFile, spawnService } from '../support/child-service.js';
import { KEYS } from '../support/service.js';

/**
 * SIGTERM while DuckDB runs a statement that would go on for minutes, on a reader (an
 * upload's type inference over a whole file) or on a dedicated connection (a refresh):
 * shutdown interrupts it, the process exits 0 within serve's deadline, and a new server
 * started on the same data directory once that deadline and a second have passed gets the
 * database file (a process still holding it would make the new one exit 3).
 */

/** serve's deadline (README, "Shutdown"): past it the process must be gone. */
const SHUTDOWN_DEADLINE_MS = 10_000;

const { track, freshDir } = childServicesOfThisFile();

/**
 * An upload of ~100 MB of numbers in 20 columns whose first column turns to text after the
 * rows the service samples (20,480): the load with the sampled types fails at once, and the
 * types are inferred again over the whole file on a reader connection, which takes tens of
 * seconds (17 s for 50 MB on the 2-core machine, 2026-11-23).
 */
function slowInferenceBody(): Buffer {
  const columns = 20;
  const lines = [Array.from({ length: columns }, (_, i) => `c${i}`).join(',')];
  for (let row = 0, size = 0; size < 100_000_000; row++) {
    const fields = Array.from({ length: columns }, (_, i) => String((row * 31 + i) % 100_000));
    if (row === 25_000) fields[0] = 'text';
    const line = fields.join(',');
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(JSON.stringify({ table_name: 'slow', data: `${lines.join('\n')}\n` }));
}

/** Posts the body; resolves once it is all written. The answer, if any, is ignored. */
function postUpload(url: string, body: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(`${url}/v1/table/upload/csv`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'x-service-api-key': KEYS.alice,
      },
    });
    req.on('response', (res) => res.resume());
    req.on('error', () => undefined);
    req.end(body, () => resolve());
  });
}

/** Sends SIGTERM; resolves with the exit code, or 'running' if the process outlives the deadline and a second. */
async function terminate(service: ChildService): Promise<{ code: number | string; ms: number }> {
  const started = performance.now();
  service.process.kill('SIGTERM');
  const code = await Promise.race([
    service.exited,
    new Promise<string>((r) => setTimeout(() => r('running'), SHUTDOWN_DEADLINE_MS + 1_000)),
  ]);
  return { code, ms: performance.now() - started };
}

async function restartServes(dataDir: string, env: Record<string, string> = {}): Promise<void> {
  const restarted = track(await spawnService(dataDir, env));
  const response = await fetch(`${restarted.url}/v1/tables`, {
    headers: { 'x-service-api-key': KEYS.alice },
  });
  expect(response.status).toBe(200);
  restarted.process.kill('SIGTERM');
  expect(await restarted.exited).toBe(0);
}

describe('SIGTERM while a statement would run for minutes', () => {
  it('on two readers (uploads inferring types over their whole file): exits 0 in time, a restart gets the file', async () => {
    const body = slowInferenceBody();
    const dataDir = freshDir('shutdown-reader-');
    const service = track(await spawnService(dataDir));
    await Promise.all([postUpload(service.url, body), postUpload(service.url, body)]);
    // The sampled types fail within a second of the body's end; the whole-file inference follows.
    await new Promise((r) => setTimeout(r, 1_500));
    const { code } = await terminate(service);
    if (code !== 0) throw new Error(`exit ${code} after SIGTERM:\n${service.output().slice(-3000)}`);
    // The interrupted inference is the shutdown's doing, not a bug to log.
    expect(service.output()).not.toContain('unhandled error');
    await restartServes(dataDir);
  });

  it('on a dedicated connection (a refresh running a huge cross join): exits 0 in time, a restart gets the file', async () => {
    const queriesDir = freshDir('shutdown-queries-');
    fs.writeFileSync(
      path.join(queriesDir, '2001-cross-join.sql'),
      [
        '-- id: 2001',
        '-- name: Cross join',
        '-- description: Runs for hours: a trillion pairs.',
        '-- refresh_seconds: 86400',
        'SELECT count(*) AS n FROM range(1000000) a, range(1000000) b WHERE a.range + b.range = 7',
        '',
      ].join('\n'),
    );
    const env = { QUERIES_DIR: queriesDir, LOG_LEVEL: 'info' };
    const dataDir = freshDir('shutdown-refresh-');
    const service = track(await spawnService(dataDir, env));
    // The scheduler runs every saved query at start.
    for (let i = 0; i < 400 && !/"queryId":2001,"msg":"execution started"/.test(service.output()); i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(service.output()).toMatch(/"queryId":2001,"msg":"execution started"/);
    await new Promise((r) => setTimeout(r, 500));
    const { code } = await terminate(service);
    if (code !== 0) throw new Error(`exit ${code} after SIGTERM:\n${service.output().slice(-3000)}`);
    await restartServes(dataDir, env);
  });
});
