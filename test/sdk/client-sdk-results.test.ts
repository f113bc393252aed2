import { DuneClient, ExecutionState } from '@duneanalytics/client-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService } from '../support/service.js';

/**
 * The official TypeScript client's results calls on the metrics query, unmodified; only its
 * base address is redirected (a constant in the client, so fetch is wrapped). The service
 * starts with the demo data set, and pages are kept small so that the client has to follow
 * next_uri and X-Dune-Next-Uri to the end.
 */

const DUNE_BASE = 'https://api.dune.com/api';
const METRICS = 3693850;

let service: TestService;
const realFetch = globalThis.fetch;
const followed: string[] = [];

async function latestCompleted(): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const { body } = await service.json<{ state: string; execution_id: string }>(
      `/v1/query/${METRICS}/results?limit=1`,
    );
    if (body.state === 'QUERY_STATE_COMPLETED') return body.execution_id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the metrics query never completed');
}

beforeAll(async () => {
  service = await startTestService({ DEMO_DATA: 'on' });
  await latestCompleted();
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.startsWith(service.url)) {
      followed.push(url.slice(service.url.length));
      return realFetch(url, init);
    }
    if (!url.startsWith(DUNE_BASE)) throw new Error(`unexpected address ${url}`);
    return realFetch(`${service.url}/api${url.slice(DUNE_BASE.length)}`, init);
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await service.stop();
});

describe('@duneanalytics/client-sdk results calls on the AVS metrics', () => {
  const client = new DuneClient(KEYS.alice);

  it('exec.getLastExecutionResults follows next_uri to the end and gets every row once', async () => {
    const { body: whole } = await service.json<{ result: { rows: { avs_contract_address: string }[] } }>(
      `/v1/query/${METRICS}/results`,
    );
    followed.length = 0;
    const { results, isExpired } = await client.exec.getLastExecutionResults(METRICS, { limit: 7 });
    expect(isExpired).toBe(false);
    expect(results.state).toBe(ExecutionState.COMPLETED);
    const rows = results.result?.rows ?? [];
    expect(rows).toHaveLength(whole.result.rows.length);
    expect(rows.map((r) => r.avs_contract_address)).toEqual(
      whole.result.rows.map((r) => r.avs_contract_address),
    );
    expect(followed.length).toBe(Math.ceil(rows.length / 7) - 1);
    expect(
      followed.every((path) => path.startsWith(`/api/v1/execution/${results.execution_id}/results?`)),
    ).toBe(true);
    expect(results.result?.metadata.column_names.slice(0, 5)).toEqual([
      'avs_name',
      'avs_contract_address',
      'num_operators',
      'total_TVL',
      'num_stakers',
    ]);
  });

  it('passes filters, sort_by and columns (quoted names too) through to the service', async () => {
    const { results } = await client.exec.getLastExecutionResults(METRICS, {
      columns: ['avs_name', 'total_TVL'],
      sort_by: ['total_TVL desc'],
      filters: 'num_operators > 10',
      limit: 5,
    });
    const rows = results.result?.rows ?? [];
    expect(rows.length).toBeGreaterThan(0);
    expect(Object.keys(rows[0] ?? {})).toEqual(['avs_name', 'total_TVL']);
    const tvl = rows.map((r) => r.total_TVL as number);
    expect([...tvl].sort((a, b) => b - a)).toEqual(tvl);
  });

  it('exec.getLastResultCSV follows X-Dune-Next-Uri to the end', async () => {
    const { body: whole } = await service.json<{ result: { rows: unknown[] } }>(
      `/v1/query/${METRICS}/results`,
    );
    followed.length = 0;
    const csv = await client.exec.getLastResultCSV(METRICS, {
      limit: 9,
      columns: ['avs_name', 'num_operators'],
    });
    const lines = csv.data.trimEnd().split('\n');
    expect(lines.filter((line) => line === 'avs_name,num_operators').length).toBeGreaterThanOrEqual(1);
    const dataLines = lines.filter((line) => line !== 'avs_name,num_operators');
    expect(dataLines).toHaveLength(whole.result.rows.length);
    expect(followed.length).toBe(Math.ceil(whole.result.rows.length / 9) - 1);
    expect(followed.every((path) => path.includes('/results/csv?'))).toBe(true);
  });

  it('executeQuery, getExecutionStatus and getExecutionResults work on a fresh run', async () => {
    const { execution_id } = await client.exec.executeQuery(METRICS);
    let status = await client.exec.getExecutionStatus(execution_id);
    for (let i = 0; i < 200 && status.state !== ExecutionState.COMPLETED; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = await client.exec.getExecutionStatus(execution_id);
    }
    expect(status.state).toBe(ExecutionState.COMPLETED);
    if (status.state === ExecutionState.COMPLETED)
      expect(status.result_metadata.total_row_count).toBeGreaterThan(0);
    const page = await client.exec.getExecutionResults(execution_id, { limit: 3 });
    expect(page.result?.rows).toHaveLength(3);
    expect(page.next_uri).toContain(`/execution/${execution_id}/results`);
    expect(await client.exec.cancelExecution(execution_id)).toBe(false);
  });

  it('sample_count through the client', async () => {
    const page = await client.exec.getLastExecutionResults(METRICS, { sample_count: 4 });
    expect(page.results.result?.rows).toHaveLength(4);
  });
});
