import fs from 'node:fs';
import pg from 'pg';

/**
 * Writes src/pgwire/catalog-definitions.json from a running PostgreSQL 15: the columns of every
 * relation of pg_catalog and information_schema, and the rows of the few catalogs that hold
 * no user data (built-in types, access methods, collations, tablespaces, languages). The
 * Postgres wire protocol's catalog (catalog-database.ts) is built from it.
 *
 *   npx tsx scripts/pg-catalog-definitions.ts postgresql://postgres@127.0.0.1:5432/postgres
 */

/** The built-in types the service's columns map to (pg-types.ts), and their arrays. */
const TYPE_OIDS = [
  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 30, 114, 194, 700, 701, 705, 1042, 1043, 1082, 1083, 1114, 1184,
  1186, 1266, 1560, 1562, 1700, 2205, 2206, 2950, 3802, 4089, 2249, 2278, 2277, 2283,
];

async function main(): Promise<void> {
  const client = new pg.Client({ connectionString: process.argv[2] });
  await client.connect();
  const version = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]
    ?.v;
  const { rows: columns } = await client.query<{
    nspname: string;
    relname: string;
    attname: string;
    type: string;
  }>(`
    SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind IN ('r', 'v')
      AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY n.nspname, c.relname, a.attnum`);
  const relations = new Map<string, string[]>();
  for (const row of columns) {
    const key = `${row.nspname}.${row.relname}`;
    const list = relations.get(key) ?? [];
    relations.set(key, list);
    list.push(`${row.attname} ${row.type.replace(/^information_schema\./, '')}`);
  }
  const staticRows: Record<string, unknown[]> = {};
  const rowsOf = async (relation: string, where = 'true') => {
    const { rows } = await client.query(
      `SELECT * FROM pg_catalog.${relation} WHERE ${where} ORDER BY oid`,
      [],
    );
    staticRows[relation] = rows;
  };
  await client.query("SET bytea_output = 'hex'");
  const typeArrays = await client.query<{ typarray: string }>(
    'SELECT typarray FROM pg_type WHERE oid = ANY($1) AND typarray <> 0',
    [TYPE_OIDS],
  );
  const typeOids = [...TYPE_OIDS, ...typeArrays.rows.map((r) => Number(r.typarray))];
  const types = await client.query(
    `SELECT oid, typname, typnamespace, typowner, typlen, typbyval, typtype, typcategory, typispreferred, typisdefined,
       typdelim, typrelid, typsubscript::text, typelem, typarray, typinput::text, typoutput::text, typreceive::text,
       typsend::text, typmodin::text, typmodout::text, typanalyze::text, typalign, typstorage, typnotnull,
       typbasetype, typtypmod, typndims, typcollation, NULL AS typdefaultbin, typdefault, NULL AS typacl
     FROM pg_type WHERE oid = ANY($1) ORDER BY oid`,
    [typeOids],
  );
  staticRows.pg_type = types.rows;
  await rowsOf('pg_am');
  await rowsOf('pg_collation', "collname IN ('default', 'C', 'POSIX')");
  await rowsOf('pg_tablespace');
  await rowsOf('pg_language');
  await client.end();
  // One relation or row a line: biome leaves the file alone (biome.json), and a diff shows what changed.
  const entries = (values: [string, unknown][]) =>
    values.map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const text = [
    '{',
    `  "source": "scripts/pg-catalog-definitions.ts, PostgreSQL ${version}",`,
    '  "relations": {',
    entries([...relations]).join(',\n'),
    '  },',
    '  "staticRows": {',
    Object.entries(staticRows)
      .map(
        ([name, rows]) =>
          `    ${JSON.stringify(name)}: [\n${rows.map((row) => `      ${JSON.stringify(row)}`).join(',\n')}\n    ]`,
      )
      .join(',\n'),
    '  }',
    '}',
    '',
  ];
  fs.writeFileSync('src/pgwire/catalog-definitions.json', text.join('\n'));
  console.log(`${relations.size} relations, ${typeOids.length} types`);
}

await main();
