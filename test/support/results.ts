import { expect } from 'vitest';
import type { TestService } from './service.js';

export interface Envelope {
  execution_id: string;
  query_id: number;
  state: string;
  is_execution_finished: boolean;
  submitted_at: string;
  execution_started_at?: string;
  execution_ended_at?: string;
  cancelled_at?: string;
  expires_at?: string;
  next_offset?: number;
  next_uri?: string;
  error?: { type: string; message: string };
  queue_position?: number;
  result?: {
    rows: Record<string, unknown>[];
    metadata: Record<string, number | string[]>;
  };
  result_metadata?: Record<string, number | string[]>;
}

/** Waits until the execution has finished, and returns its status. */
export async function waitFinished(
  service: TestService,
  executionId: string,
  timeoutMs = 30_000,
): Promise<Envelope> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await service.json<Envelope>(`/v1/execution/${executionId}/status`);
    if (body.is_execution_finished) return body;
    if (Date.now() > until)
      throw new Error(`execution ${executionId} did not finish: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs a saved query now and waits for it; returns the finished execution's status. */
export async function executeAndWait(service: TestService, queryId: number): Promise<Envelope> {
  const { status, body } = await service.json<{ execution_id: string; state: string }>(
    `/v1/query/${queryId}/execute`,
    {
      method: 'POST',
    },
  );
  expect(status).toBe(200);
  expect(body.state).toBe('QUERY_STATE_PENDING');
  return waitFinished(service, body.execution_id);
}

export async function upload(service: TestService, table: string, data: string): Promise<void> {
  const { status, body } = await service.json('/v1/table/upload/csv', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ table_name: table, data }),
  });
  expect(status, JSON.stringify(body)).toBe(200);
}

/** Follows next_uri from a first page to the last, returning every page. */
export async function walk(service: TestService, firstPath: string): Promise<Envelope[]> {
  const pages: Envelope[] = [];
  let path: string | undefined = firstPath;
  while (path) {
    const { status, body }: { status: number; body: Envelope } = await service.json<Envelope>(path);
    expect(status, JSON.stringify(body)).toBe(200);
    pages.push(body);
    path = body.next_uri?.slice(service.url.length);
    if (pages.length > 1000) throw new Error('next_uri never ends');
  }
  return pages;
}
