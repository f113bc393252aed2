import pg from 'pg';

/**
 * The Postgres client of `npm run bench -- pgwire`, in a process of its own (as a real client
 * is): npm `pg` running what the parent asks over IPC and answering with its times. Rows are
 * read as `pg` gives them to an application that does not keep them (a 'row' listener, values
 * as text), so what is measured is the server and the transfer, with pg's own parsing.
 */

export type PgwireCommand =
  | {
      kind: 'round-trips';
      port: number;
      user: string;
      password: string;
      sql: string;
      values?: unknown[];
      count: number;
    }
  | { kind: 'stream'; port: number; user: string; password: string; sql: string };

export interface PgwireAnswer {
  /** round-trips: microseconds per round trip; stream: milliseconds for the whole result. */
  value: number;
  rows: number;
  error?: string;
}

const clients = new Map<string, pg.Client>();

async function clientFor(command: PgwireCommand): Promise<pg.Client> {
  const key = `${command.port}/${command.user}`;
  let client = clients.get(key);
  if (!client) {
    client = new pg.Client({
      host: '127.0.0.1',
      port: command.port,
      user: command.user,
      password: command.password,
      database: command.user === 'postgres' ? 'postgres' : 'dune',
    });
    await client.connect();
    // The service's shutdown ends the session (57P01): not this process's concern.
    client.on('error', () => undefined);
    clients.set(key, client);
  }
  return client;
}

const text = { getTypeParser: () => (value: string) => value };

async function run(command: PgwireCommand): Promise<PgwireAnswer> {
  const client = await clientFor(command);
  if (command.kind === 'round-trips') {
    const started = performance.now();
    for (let i = 0; i < command.count; i++)
      await client.query({ text: command.sql, values: command.values, types: text });
    return { value: ((performance.now() - started) * 1000) / command.count, rows: command.count };
  }
  let rows = 0;
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const query = client.query(
      new pg.Query({ text: command.sql, rowMode: 'array', types: text } as pg.QueryConfig),
    );
    query.on('row', () => {
      rows++;
    });
    query.on('end', () => resolve());
    query.on('error', reject);
  });
  return { value: performance.now() - started, rows };
}

process.on('message', (command: PgwireCommand) => {
  run(command).then(
    (answer) => process.send?.(answer),
    (error: unknown) => process.send?.({ value: 0, rows: 0, error: String(error) }),
  );
});
process.on('disconnect', () => {
  for (const client of clients.values()) void client.end();
  process.exit(0);
});
