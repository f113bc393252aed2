import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type ChildService, spawnService } from '../../support/child-service.js';
import { KEYS } from '../../support/service.js';

/** Helpers of the fault tests: a real server process, killed and restarted on one DATA_DIR. */

export const FAULT_QUERIES_DIR = path.resolve(import.meta.dirname, '..', 'queries');

export function startServer(dataDir: string, env: Record<string, string> = {}): Promise<ChildService> {
  return spawnService(dataDir, { QUERIES_DIR: FAULT_QUERIES_DIR, ...env });
}

export async function call<T = Record<string, unknown>>(
  server: ChildService,
  urlPath: string,
  init: { method?: string; body?: string; type?: string; key?: string } = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.url}${urlPath}`, {
    method: init.method ?? 'GET',
    headers: {
      'x-service-api-key': init.key ?? KEYS.alice,
      ...(init.type ? { 'content-type': init.type } : {}),
    },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Calls and insists on the status: the write is then acknowledged. */
export async function acknowledged(
  server: ChildService,
  urlPath: string,
  init: { method?: string; body?: string; type?: string; key?: string },
  status = 200,
): Promise<Record<string, unknown>> {
  const answer = await call(server, urlPath, init);
  if (answer.status !== status)
    throw new Error(`${urlPath}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * Sends a request body and kills the server with SIGKILL as soon as the whole body is in
 * its temporary file (DATA_DIR/tmp/<prefix>…): the server is then past reading and inside
 * the database write, which for these bodies takes far longer than the polling interval.
 * Resolves with whether any answer arrived (it must not have).
 */
export async function killWhenReceived(
  server: ChildService,
  dataDir: string,
  request: { path: string; type: string; body: Buffer; filePrefix: string; expectedFileBytes: number },
): Promise<{ answered: boolean }> {
  let answered = false;
  let answer = '';
  const done = new Promise<void>((resolve) => {
    const req = http.request(`${server.url}${request.path}`, {
      method: 'POST',
      headers: {
        'content-type': request.type,
        'content-length': request.body.length,
        'x-service-api-key': KEYS.alice,
      },
    });
    req.on('response', (res) => {
      answered = true;
      res.on('data', (c: Buffer) => {
        answer += c.toString();
      });
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end(request.body);
  });
  const tmp = path.join(dataDir, 'tmp');
  const until = Date.now() + 60_000;
  for (;;) {
    const file = fs
      .readdirSync(tmp)
      .find((name) => name.startsWith(request.filePrefix) && !name.endsWith('.sample'));
    const size = file ? fs.statSync(path.join(tmp, file), { throwIfNoEntry: false })?.size : undefined;
    // Whole, or whole and already trimmed of its final line end (the insert's first step).
    if (size === request.expectedFileBytes || size === request.expectedFileBytes - 1) break;
    if (answered || Date.now() > until)
      throw new Error(`the body never arrived whole (answered: ${answered} ${answer}):\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  server.process.kill('SIGKILL');
  await done;
  return { answered };
}

/** Opens the database file directly, as DuckDB itself, after the server has stopped. */
export async function withDatabaseFile<T>(
  dataDir: string,
  read: (query: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(path.join(dataDir, 'warehouse.duckdb'));
  const connection = await instance.connect();
  try {
    return await read(async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS());
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Waits until the execution reaches one of `states`; returns its status body. */
export async function waitForState(
  server: ChildService,
  executionId: string,
  states: string[],
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(server, `/v1/execution/${executionId}/status`);
    if (states.includes(String(body.state))) return body;
    if (Date.now() > until)
      throw new Error(`execution ${executionId} never reached ${states}: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
