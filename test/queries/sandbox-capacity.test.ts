import { afterEach, describe, expect, it } from 'vitest';
import { MAX_SQL_BYTES } from '../../src/queries/sandbox/sandbox-sql.js';
import { startTestService, type TestService } from '../support/service.js';
import { fill } from './support/hostile-shapes.js';
import { post, rowsOf, uploadTable } from './support/queries.js';

/**
 * The sandbox's capacity end to end (issue 22): the check of users' SQL has workers of its
 * own, so it never waits for the readers that results work may hold; its queue is bounded
 * (SANDBOX_QUEUE_LIMIT) with a clear 503; and what DuckDB's parser cannot parse in linear time
 * is a 400 before it tries.
 */

let service: TestService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

describe('the sandbox check', () => {
  it('needs none of the shared readers: it checks and resolves table names while every reader is held', async () => {
    service = await startTestService();
    await uploadTable(service, 'prices', 'token,price\nstETH,1\n');
    const database = service.database;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = Array.from({ length: 4 }, () => database.read(() => held));
    try {
      const answer = await Promise.race([
        service.json<{ execution_id: string }>(
          '/v1/sql/execute',
          post({ sql: 'SELECT sum(price) AS total FROM dataset_prices' }),
        ),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('the check waited for a reader')), 20_000),
        ),
      ]);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      release();
      await Promise.all(holders);
      expect(await rowsOf(service, answer.body.execution_id)).toEqual([{ total: 1 }]);
    } finally {
      release();
    }
  });

  it('queues at most SANDBOX_QUEUE_LIMIT checks; past it, a 503 with Retry-After', async () => {
    service = await startTestService({ SANDBOX_WORKERS: '1', SANDBOX_QUEUE_LIMIT: '1' });
    // The worker starts with the first check, which waits for it; the second finds the queue full.
    const [first, second] = await Promise.all([
      service.request('/v1/sql/execute', post({ sql: 'SELECT 1' })),
      service.request('/v1/sql/execute', post({ sql: 'SELECT 2' })),
    ]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(await second.json()).toEqual({
      error: 'too many SQL checks are waiting (1); try again in a moment',
    });
    await first.arrayBuffer();
  });

  it('refuses 64 KiB of ANDed conditions before parsing them, with what to write instead', async () => {
    service = await startTestService();
    const sql = fill(MAX_SQL_BYTES, 'SELECT 1 WHERE ', () => '1=1', ' AND ');
    const { status, body } = await service.json<{ error: string }>('/v1/sql/execute', post({ sql }));
    expect(status).toBe(400);
    expect(body.error).toMatch(
      /^this SQL joins too many conditions with AND or OR in one expression: .*write a long OR of equalities as col IN \(…\).* at position \d+$/,
    );
  });
});
