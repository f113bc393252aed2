import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, executeAndWait, upload } from '../support/results.js';
import { startTestService, type TestService } from '../support/service.js';

const QUERIES_DIR = path.resolve(import.meta.dirname, '../fixtures/queries');
let service: TestService;
let partial: Envelope;

beforeAll(async () => {
  service = await startTestService({ QUERIES_DIR, MAX_RESULT_ROWS: '10', MAX_DATAPOINTS_PER_REQUEST: '12' });
  const lines = ['n,sq,name'];
  for (let i = 1; i <= 25; i++) lines.push(`${i},${i * i},n${i}`);
  await upload(service, 'numbers', `${lines.join('\n')}\n`);
  partial = await executeAndWait(service, 1001);
});
afterAll(async () => {
  await service.stop();
});

describe('a result over MAX_RESULT_ROWS', () => {
  it('is kept truncated as QUERY_STATE_COMPLETED_PARTIAL', () => {
    expect(partial.state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
    expect(partial.result_metadata?.total_row_count).toBe(10);
  });

  it('without allow_partial_results: 200, state QUERY_STATE_FAILED and an error saying how to get it', async () => {
    const { status, body } = await service.json<Envelope>('/v1/query/1001/results?limit=2');
    expect(status).toBe(200);
    expect(body.state).toBe('QUERY_STATE_FAILED');
    expect(body.is_execution_finished).toBe(true);
    expect(body.error).toEqual({
      type: 'FAILED_TYPE_RESULT_TOO_LARGE',
      message: expect.stringMatching(/allow_partial_results=true/),
    });
    expect(body).not.toHaveProperty('result');
    const csv = await service.json<{ error: string }>('/v1/query/1001/results/csv?limit=2');
    expect(csv.status).toBe(409);
    expect(csv.body.error).toMatch(/allow_partial_results=true/);
  });

  it('with allow_partial_results=true: the first rows, state QUERY_STATE_COMPLETED_PARTIAL, and next_uri keeps the flag', async () => {
    const { body } = await service.json<Envelope>(
      '/v1/query/1001/results?allow_partial_results=true&limit=3&columns=n',
    );
    expect(body.state).toBe('QUERY_STATE_COMPLETED_PARTIAL');
    expect(body.result?.rows).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(body.result?.metadata.total_row_count).toBe(10);
    expect(body.next_uri).toMatch(/allow_partial_results=true/);
  });
});

describe('the datapoint cap', () => {
  it('refuses a page over MAX_DATAPOINTS_PER_REQUEST, saying how to page or narrow the columns', async () => {
    const { status, body } = await service.json<{ error: string }>(
      '/v1/query/1001/results?allow_partial_results=true&limit=5',
    );
    expect(status).toBe(400);
    expect(body.error).toMatch(/15 datapoints \(5 rows × 3 columns\), over the limit of 12/);
    expect(body.error).toMatch(/limit=4/);
    expect(body.error).toMatch(/columns/);
    expect(body.error).toMatch(/ignore_max_datapoints_per_request=true/);
  });

  it('counts the page actually returned, and the flag lifts the cap', async () => {
    const narrow = await service.json<Envelope>(
      '/v1/query/1001/results?allow_partial_results=true&limit=6&columns=n,sq',
    );
    expect(narrow.status).toBe(200);
    expect(narrow.body.result?.metadata.datapoint_count).toBe(12);
    const lifted = await service.json<Envelope>(
      '/v1/query/1001/results?allow_partial_results=true&ignore_max_datapoints_per_request=true',
    );
    expect(lifted.status).toBe(200);
    expect(lifted.body.result?.metadata.datapoint_count).toBe(30);
    const sampled = await service.json<{ error: string }>(
      '/v1/query/1001/results?allow_partial_results=true&sample_count=5',
    );
    expect(sampled.status).toBe(400);
  });
});
