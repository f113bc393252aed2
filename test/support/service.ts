import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { createLogger, type Logger } from '../../src/log.js';
import { type RunningService, type ServiceHooks, startService } from '../../src/service.js';

/** Keys every test service accepts (API_KEYS), one account of each kind. */
export const KEYS = {
  alice: 'alice-free-key-0001',
  bob: 'bob-premium-key-0001',
  admin: 'admin-key-000000001',
  carol: 'carol-free-key-0001',
} as const;

export const TEST_API_KEYS = `${KEYS.alice}=alice:free,${KEYS.bob}=bob:premium,${KEYS.admin}=root:premium:admin,${KEYS.carol}=carol`;

export interface TestService extends RunningService {
  dataDir: string;
  /** fetch against the service with a key (header X-Service-Api-Key) unless `key: null`. */
  request(urlPath: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  json<T = unknown>(
    urlPath: string,
    init?: RequestInit & { key?: string | null },
  ): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'svc-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A real listening service on a free port and a fresh data directory. */
export async function startTestService(
  env: Record<string, string> = {},
  dataDir = tempDir(),
  hooks: ServiceHooks = {},
  logger: Logger = createLogger('silent'),
): Promise<TestService> {
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    API_KEYS: TEST_API_KEYS,
    RATE_LIMITS: 'off',
    DEMO_DATA: 'off',
    // Tests of the Postgres wire protocol ask for it (PG_PORT: '0').
    PG_PORT: 'off',
    ...env,
  });
  const service = await startService(config, logger, hooks);
  // The test process is this server's client too: a stall of their one event loop past Node's
  // 5 s keep-alive timeout had the expired timer close a connection the test had just sent
  // its next request on (ECONNRESET; 3 of 6 rounds with a 6 s stall right after an answer,
  // none with this). Idle connections are closed by the client instead, and at stop.
  service.server.keepAliveTimeout = 0;
  const request = (urlPath: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = KEYS.alice, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (key !== null && !merged.has('x-service-api-key')) merged.set('x-service-api-key', key);
    return fetch(`${service.url}${urlPath}`, { ...rest, headers: merged });
  };
  return {
    ...service,
    dataDir,
    request,
    async json<T>(urlPath: string, init?: RequestInit & { key?: string | null }) {
      const response = await request(urlPath, init);
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(
          `${urlPath} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
        );
      }
      return { status: response.status, body: body as T };
    },
    async stop() {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** POST /v1/table/upload/csv with a JSON body. */
export function uploadBody(fields: Record<string, unknown>): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) };
}
