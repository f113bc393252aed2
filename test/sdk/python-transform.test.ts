import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, startTestService, type TestService, uploadBody } from '../support/service.js';
import { runPython } from './support/python-client.js';

/**
 * The official Python client's calls for a transform layer (`dune-client`, unmodified):
 * datasets, usage, query pipelines and their status, against the listening server.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
  for (const [table, isPrivate] of [
    ['prices', false],
    ['hidden', true],
  ] as const) {
    const upload = await service.json('/v1/table/upload/csv', {
      ...uploadBody({ table_name: table, data: 'day,price\n2024-01-01,1.5\n', is_private: isPrivate }),
      key: KEYS.bob,
    });
    expect(upload.status).toBe(200);
  }
});
afterAll(async () => {
  await service.stop();
});

describe('dune-client (Python): datasets and usage', () => {
  it('list_datasets, get_dataset and get_usage', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
listed = alice.list_datasets(limit=10, owner_handle="bob", type="uploaded_table")
out["listed"] = [(d.full_name, d.type, d.owner.handle, d.is_private) for d in listed.datasets]
out["total"] = listed.total
one = alice.get_dataset("dune.bob.dataset_prices")
out["columns"] = [(c.name, c.type, c.nullable) for c in one.columns]
out["metadata"] = one.metadata
try:
    alice.get_dataset("dune.bob.dataset_hidden")
    out["hidden"] = "visible"
except Exception as error:
    out["hidden"] = status_of(error)
out["bob_sees"] = bob.get_dataset("dune.bob.dataset_hidden").is_private
usage = bob.get_usage()
out["usage"] = [usage.private_queries, usage.private_dashboards, usage.bytes_used > 0, usage.bytes_allowed, len(usage.billing_periods)]
ranged = alice.get_usage(start_date="2024-01-10", end_date="2024-02-10")
out["periods"] = [(p.start_date, p.end_date, p.credits_used) for p in ranged.billing_periods]
print(json.dumps(out))
`,
    );
    expect(out).toEqual({
      listed: [['dune.bob.dataset_prices', 'uploaded_table', 'bob', false]],
      total: 1,
      columns: [
        ['day', 'date', true],
        ['price', 'double', true],
      ],
      metadata: { description: '', row_count: '1', table_size_bytes: expect.any(String) },
      hidden: 404,
      bob_sees: true,
      usage: [0, 0, true, 10_000_000_000, 1],
      periods: [
        ['2024-01-01', '2024-01-31', 0],
        ['2024-02-01', '2024-02-29', 0],
      ],
    });
  });
});

describe('dune-client (Python): pipelines', () => {
  it('execute_query_pipeline and get_pipeline_status, with a failing node', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
import time
out = {}
base = bob.create_query("base", "SELECT day, price FROM dataset_prices").base.query_id
bob._post(route="/materialized-views", params={"name": "result_base", "query_id": base})
while bob._get(route="/materialized-views/result_base")["last_refreshed_at"] is None:
    time.sleep(POLL)  # the client has no call for views: its own GET and POST reach Dune's endpoints
top = bob.create_query("top", "SELECT count(*) AS n FROM result_base").base.query_id
def wait(pipeline_id):
    for _ in range(1000):
        status = bob.get_pipeline_status(pipeline_id)
        if status.status in ("completed", "failed"):
            return status
        time.sleep(POLL)
started = bob.execute_query_pipeline(top, performance="medium")
status = wait(started.pipeline_execution_id)
out["status"] = status.status
out["nodes"] = [(n.id, n.query_execution_status.query_id, n.query_execution_status.status, n.query_execution_status.execution_id is not None) for n in status.node_executions]
rows = bob.get_execution_results(status.node_executions[-1].query_execution_status.execution_id).get_rows()
out["rows"] = rows
bob.update_query(base, query_sql="SELECT 'x'::INTEGER AS day")
failed = wait(bob.execute_query_pipeline(top).pipeline_execution_id)
out["failed"] = [failed.status] + [(n.id, n.query_execution_status.status) for n in failed.node_executions]
try:
    alice.get_pipeline_status(started.pipeline_execution_id)
    out["alice"] = "visible"
except Exception as error:
    out["alice"] = status_of(error)
print(json.dumps(out))
`,
    );
    const ids = out.nodes as [number, number, string, boolean][];
    expect(out).toEqual({
      status: 'completed',
      nodes: [
        [1, ids[0]?.[1], 'QUERY_STATE_COMPLETED', true],
        [2, ids[1]?.[1], 'QUERY_STATE_COMPLETED', true],
      ],
      rows: [{ n: 1 }],
      failed: ['failed', [1, 'QUERY_STATE_FAILED'], [2, 'QUERY_STATE_FAILED']],
      alice: 404,
    });
  });
});
