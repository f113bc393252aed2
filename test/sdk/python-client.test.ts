import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { CLIENT_PATH, checkClientPath, runPython } from './support/python-client.js';

/**
 * The official Python client (`dune-client`), unmodified, against the listening server: its
 * table calls, its query calls (DESIGN §10) and its results calls, as a user would make them.
 */

let service: TestService;

const PRICES = 'day,token,price\n2024-01-01,stETH,2301.5\n2024-01-02,rETH,2512.25\n2024-01-03,stETH,2400\n';

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.stop();
});

describe('dune-client (Python): tables', () => {
  it('uploads a CSV, creates a table, inserts, lists, clears and deletes', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
out["upload"] = alice.upload_csv(table_name="prices", data=${JSON.stringify(PRICES)}, description="daily", is_private=False).table_name
out["create"] = alice.create_table(namespace="alice", table_name="events", schema=[{"name": "id", "type": "bigint"}, {"name": "amount", "type": "uint256"}]).full_name
inserted = alice.insert_data(namespace="alice", table_name="events", data=io.BytesIO(b"id,amount\\n1,115792089237316195423570985008687907853269984665640564039457584007913129639935\\n"), content_type="text/csv")
out["inserted"] = inserted.rows_written
listing = alice.list_uploads(limit=10)
out["listed"] = sorted(t.full_name for t in listing.tables)
out["sizes_are_text"] = all(isinstance(t.table_size_bytes, str) for t in listing.tables)
out["cleared"] = alice.clear_table(namespace="alice", table_name="events").message
out["deleted"] = alice.delete_table(namespace="alice", table_name="events").message
print(json.dumps(out))
`,
    );
    expect(out).toEqual({
      upload: 'dataset_prices',
      create: 'alice.events',
      inserted: 1,
      listed: ['alice.dataset_prices', 'alice.events'],
      sizes_are_text: true,
      cleared: 'Table alice.events successfully cleared',
      deleted: 'Table alice.events successfully deleted',
    });
  });
});

describe('dune-client (Python): queries', () => {
  it('creates, reads, updates, archives and unarchives a query with parameters of each type', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
params = [
    QueryParameter.text_type("token", "stETH"),
    QueryParameter.number_type("min", 2000),
    QueryParameter.date_type("since", "2024-01-01 00:00:00"),
    QueryParameter.enum_type("side", "up"),
]
q = alice.create_query("Prices", "SELECT * FROM dataset_prices WHERE token = '{{token}}' AND price >= {{min}} AND day >= timestamp '{{since}}' AND '{{side}}' = 'up'", params=params)
out["created"] = {"id": q.base.query_id, "name": q.base.name, "params": [[p.key, p.type.value, str(p.value)] for p in q.base.parameters()],
                  "version": q.meta.version, "owner": q.meta.owner, "private": q.meta.is_private, "engine": q.meta.engine}
out["updated_id"] = alice.update_query(q.base.query_id, name="Prices 2", description="by token", tags=["prices"])
again = alice.get_query(q.base.query_id)
out["read"] = {"name": again.base.name, "description": again.meta.description, "tags": again.meta.tags, "version": again.meta.version}
out["archived"] = alice.archive_query(q.base.query_id)
out["unarchived"] = alice.unarchive_query(q.base.query_id)
print(json.dumps(out))
`,
    );
    const created = out.created as { id: number };
    expect(out).toEqual({
      created: {
        id: created.id,
        name: 'Prices',
        params: [
          ['token', 'text', 'stETH'],
          ['min', 'number', '2000'],
          ['since', 'datetime', '2024-01-01 00:00:00'],
          ['side', 'enum', 'up'],
        ],
        version: 1,
        owner: 'alice',
        private: false,
        engine: 'medium',
      },
      updated_id: created.id,
      read: { name: 'Prices 2', description: 'by token', tags: ['prices'], version: 2 },
      archived: true,
      unarchived: false,
    });
  });

  it('makes a query private and public again (a premium key), and a free key gets 403', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
q = bob.create_query("Mine", "SELECT 1 AS one")
bob.make_private(q.base.query_id)
out["private"] = bob.get_query(q.base.query_id).meta.is_private
try:
    alice.get_query(q.base.query_id)
except Exception as error:
    out["hidden"] = status_of(error)
bob.make_public(q.base.query_id)
out["public"] = not bob.get_query(q.base.query_id).meta.is_private
mine = alice.create_query("Free", "SELECT 1 AS one")
try:
    alice.make_private(mine.base.query_id)
except Exception as error:
    out["free"] = status_of(error)
print(json.dumps(out))
`,
    );
    expect(out).toEqual({ private: true, hidden: 404, public: true, free: 403 });
  });

  it('runs a query with parameters, gets the latest result per parameter set and downloads the CSV', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
q = alice.create_query("By token", "SELECT day, price FROM dataset_prices WHERE token = '{{token}}' AND price >= {{min}} ORDER BY day",
                       params=[QueryParameter.text_type("token", "stETH"), QueryParameter.number_type("min", 0)])
query_id = q.base.query_id
reth = QueryBase(query_id, params=[QueryParameter.text_type("token", "rETH"), QueryParameter.number_type("min", 0)])
ran = alice.run_query(reth, ping_frequency=POLL)
out["ran"] = {"state": ran.state.value, "rows": ran.get_rows(), "query_id": ran.query_id}
defaults = alice.run_query(QueryBase(query_id), ping_frequency=POLL, batch_size=1)
out["defaults"] = [r["price"] for r in defaults.get_rows()]
latest = alice.get_latest_result(reth)
out["latest"] = {"same": latest.execution_id == ran.execution_id, "rows": latest.get_rows()}
out["latest_default"] = [r["price"] for r in alice.get_latest_result(query_id, batch_size=1).get_rows()]
out["csv"] = alice.download_csv(reth).data.read().decode()
out["csv_default"] = alice.download_csv(query_id, batch_size=1).data.read().decode()
print(json.dumps(out))
`,
    );
    expect(out).toEqual({
      ran: {
        state: 'QUERY_STATE_COMPLETED',
        rows: [{ day: '2024-01-02', price: 2512.25 }],
        query_id: expect.any(Number),
      },
      defaults: [2301.5, 2400],
      latest: { same: true, rows: [{ day: '2024-01-02', price: 2512.25 }] },
      latest_default: [2301.5, 2400],
      csv: 'day,price\n2024-01-02,2512.25\n',
      csv_default: 'day,price\n2024-01-01,2301.5\n2024-01-03,2400.0\n',
    });
  });

  it('reads a large result to the end through next_uri, as rows and as CSV', async () => {
    // 120,000 rows: pages of 50,000 (5 MB) are written by DuckDB into files and sent from there.
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
q = alice.create_query("Many rows", "SELECT i AS id, '0x' || lpad(lower(to_hex(i * 7919)), 40, '0') AS address, CAST(i AS DOUBLE) / 4 AS amount, TIMESTAMP '2024-01-01' + to_seconds(i) AS at FROM range(120000) r(i)")
ran = alice.run_query(QueryBase(q.base.query_id), ping_frequency=POLL, batch_size=50000)
rows = alice.get_latest_result(q.base.query_id, batch_size=50000).get_rows()
out["count"] = len(rows)
out["in_order"] = all(row["id"] == i for i, row in enumerate(rows))
out["last"] = rows[-1]
csv = alice.download_csv(q.base.query_id, batch_size=50000).data.read().decode()
lines = [line for line in csv.split("\\n") if line and line != "id,address,amount,at"]
out["csv_count"] = len(lines)
out["csv_in_order"] = all(line.split(",")[0] == str(i) for i, line in enumerate(lines))
out["csv_last"] = lines[-1]
print(json.dumps(out))
`,
    );
    const address = `0x${(119_999 * 7919).toString(16).padStart(40, '0')}`;
    expect(out).toEqual({
      count: 120_000,
      in_order: true,
      last: { id: 119_999, address, amount: 29_999.75, at: '2024-01-02 09:19:59.000 UTC' },
      csv_count: 120_000,
      csv_in_order: true,
      csv_last: `119999,${address},29999.75,2024-01-02 09:19:59.000 UTC`,
    });
  });

  it('runs ad-hoc SQL, and reports a failed one with DuckDB’s message', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
out = {}
result = alice.run_sql("SELECT token, count(*) AS days FROM dataset_prices GROUP BY token ORDER BY token", ping_frequency=POLL)
out["rows"] = result.get_rows()
out["query_id"] = result.query_id
try:
    alice.run_sql("SELECT 'abc'::INTEGER AS n", ping_frequency=POLL)
except QueryFailedError as error:
    out["failed"] = str(error)
print(json.dumps(out))
`,
    );
    expect(out.rows).toEqual([
      { token: 'rETH', days: 1 },
      { token: 'stETH', days: 2 },
    ]);
    expect(out.query_id).toBe(0);
    expect(out.failed).toMatch(/Conversion Error: Could not convert string 'abc' to INT32/);
  });

  it('executes, reads the status, pages results and CSV, and cancels', async () => {
    const out = await runPython<Record<string, unknown>>(
      service,
      `
import time
out = {}
q = alice.create_query("Numbers", "SELECT range AS n FROM range(10)")
job = alice.execute_query(QueryBase(q.base.query_id)).execution_id
status = alice.get_execution_status(job)
while not status.state.value.endswith(("COMPLETED", "FAILED", "CANCELLED")):
    time.sleep(POLL)
    status = alice.get_execution_status(job)
out["status"] = {"state": status.state.value, "rows": status.result_metadata.total_row_count, "columns": status.result_metadata.column_names}
page = alice.get_execution_results(job, limit=4, offset=2)
out["page"] = {"rows": [r["n"] for r in page.get_rows()], "next_offset": page.next_offset}
out["csv"] = alice.get_execution_results_csv(job, limit=3).data.read().decode()
slow = alice.execute_query(QueryBase(alice.create_query("Slow", "SELECT sum(a.range * b.range) AS s FROM range(1000000) a, range(1000000) b").base.query_id)).execution_id
out["cancelled"] = alice.cancel_execution(slow)
print(json.dumps(out))
`,
    );
    expect(out).toEqual({
      status: { state: 'QUERY_STATE_COMPLETED', rows: 10, columns: ['n'] },
      page: { rows: [2, 3, 4, 5], next_offset: 6 },
      csv: 'n\n0\n1\n2\n',
      cancelled: true,
    });
  });
});

describe('where the client is expected', () => {
  it('says where, when ../shared/clients/python is absent', () => {
    expect(() => checkClientPath(path.join(CLIENT_PATH, 'nowhere'))).toThrow(
      /the official Python client is expected in .*nowhere \(\.\.\/shared\/clients\/python beside this checkout\)/,
    );
    expect(() => checkClientPath(CLIENT_PATH)).not.toThrow();
  });
});
