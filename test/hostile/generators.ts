import { KEYS } from '../support/service.js';
import type { RawRequest } from './raw-http.js';

/**
 * Malformed requests for every endpoint, drawn from a seeded generator so a failure
 * reproduces. Each case is wrong in at least one way the service must refuse (and so must
 * answer with a 4xx JSON error and change nothing): no case is a valid request by accident.
 *
 * The state they run against (see hostile-inputs.test.ts): alice (free) has the upload
 * `alice.dataset_notes` and the created table `alice.events`; bob (premium) has the private
 * `bob.secrets`; the AVS metrics query 3693850 has a completed execution.
 */

export interface HostileCase {
  family: string;
  label: string;
  request: RawRequest;
}

export interface Random {
  next(): number;
  int(max: number): number;
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: small, fast and seedable. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  return { next, int, pick: (items) => items[int(items.length)] as (typeof items)[number] };
}

export interface Context {
  /** A completed execution of the metrics query. */
  executionId: string;
}

type Family = (random: Random, context: Context) => Omit<HostileCase, 'family'>;

const API_PREFIXES = ['/v1', '/api/v1'];
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const auth = (key: string): [string, string] => ['X-Service-Api-Key', key];
const anyKey = (random: Random) => random.pick([KEYS.alice, KEYS.bob, KEYS.admin]);
const writerOfAlice = (random: Random) => random.pick([KEYS.alice, KEYS.admin]);

const VALID_UPLOAD = {
  table_name: 'notes',
  description: 'notes',
  is_private: false,
  data: 'id,label\n1,one\n2,two\n',
};

/** Names no table or namespace may have: traversal, SQL, quoting, case, length, control characters. */
const BAD_NAMES = [
  '',
  'Notes',
  '1notes',
  '_notes',
  'notes-1',
  'notes.csv',
  '../notes',
  '..',
  '../../etc/passwd',
  'notes/../x',
  'notes; DROP TABLE alice.events; --',
  "notes' OR '1'='1",
  'notes" ; DROP SCHEMA alice CASCADE; --',
  'notes\u0000',
  'notes\n',
  ' notes',
  'ünïcode',
  'n'.repeat(129),
  'n'.repeat(10_000),
  '%2e%2e',
  'information_schema.tables',
];

const BAD_NAMESPACES = [
  'Alice',
  '1alice',
  '../alice',
  'alice; DROP TABLE x',
  'a'.repeat(64),
  'main',
  'information_schema',
  'pg_catalog',
  '_service',
  '_results',
  '',
];

// ---------------------------------------------------------------------------------------
// Bodies

/** JSON that is broken in one structural way; none of these parses. */
const BROKEN_JSON = [
  '{',
  '}',
  '{"table_name":"notes",}',
  '{"table_name" "notes"}',
  "{'table_name':'notes'}",
  '{table_name:"notes"}',
  '{"table_name":"notes" "data":"a\\n1\\n"}',
  '{"table_name":"notes","data":"a\\n1\\n"}}',
  '{"table_name":"notes","data":"a\\n1\\n"} trailing',
  '{"table_name":"notes","data":"a\\q1"}',
  '{"table_name":"notes","data":"a\\u12"}',
  '{"table_name":"notes","data":"a\n1"}',
  '{"table_name":"notes","is_private":NaN,"data":"a\\n1\\n"}',
  '{"table_name":"notes","is_private":True,"data":"a\\n1\\n"}',
  '{"table_name":"notes" /* comment */,"data":"a\\n1\\n"}',
  '[{"table_name":"notes","data":"a\\n1\\n"}',
  '{"table_name":"notes","data":"a\\n1\\n",',
  '\u0000{"table_name":"notes","data":"a\\n1\\n"}',
  '{"table_name":"notes","data":"a\\n1\\n"}\u0000',
];

/** A body for an endpoint that takes a JSON object, but of the wrong shape or types. */
const WRONG_TYPED_UPLOADS: unknown[] = [
  [],
  [VALID_UPLOAD],
  'notes',
  42,
  null,
  true,
  {},
  { table_name: 'notes' },
  { data: 'id\n1\n' },
  { ...VALID_UPLOAD, table_name: 123 },
  { ...VALID_UPLOAD, table_name: null },
  { ...VALID_UPLOAD, table_name: ['notes'] },
  { ...VALID_UPLOAD, table_name: { name: 'notes' } },
  { ...VALID_UPLOAD, table_name: true },
  { ...VALID_UPLOAD, data: 5 },
  { ...VALID_UPLOAD, data: ['id', '1'] },
  { ...VALID_UPLOAD, data: { id: 1 } },
  { ...VALID_UPLOAD, data: true },
  { ...VALID_UPLOAD, data: '' },
  { ...VALID_UPLOAD, data: '\n\n' },
  { ...VALID_UPLOAD, description: 5 },
  { ...VALID_UPLOAD, description: ['x'] },
  { ...VALID_UPLOAD, description: { x: 1 } },
  { ...VALID_UPLOAD, description: false },
  { ...VALID_UPLOAD, is_private: 'yes' },
  { ...VALID_UPLOAD, is_private: 'false' },
  { ...VALID_UPLOAD, is_private: 1 },
  { ...VALID_UPLOAD, is_private: 0 },
  { ...VALID_UPLOAD, is_private: [] },
  { ...VALID_UPLOAD, is_private: {} },
];

/** CSV data an upload must refuse: header rules, row shape, quoting. */
const BAD_CSV = [
  '1id,label\n1,one\n',
  'id,2label\n1,one\n',
  '$id,label\n1,one\n',
  '-id\n1\n',
  ' id\n1\n',
  'id,\n1,2\n',
  ',label\n1,2\n',
  'id,ID\n1,2\n',
  'id,id\n1,2\n',
  'id,label\n1,one,extra\n',
  'id,label\n1\n',
  'id,label\n1,"unterminated\n2,two\n',
  'id,label\n1,"bad"quote\n',
  'id,"la\u0001bel"\n1,2\n',
  `${'c'.repeat(256)}\n1\n`,
  'id,label\n1,one\n2,two,three\n3,three\n',
];

const SCHEMA = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'label', type: 'varchar' },
];

const BAD_SCHEMAS: unknown[] = [
  [],
  'id bigint',
  {},
  [{}],
  [null],
  ['id'],
  [{ name: 'id' }],
  [{ type: 'bigint' }],
  [{ name: 'id', type: 'int512' }],
  [{ name: 'id', type: 'bigint; DROP TABLE alice.events' }],
  [{ name: 'id', type: 'BIGINT[]' }],
  [{ name: 'id', type: 'bigint', nullable: 'no' }],
  [{ name: 'id', type: 'bigint', nullable: 1 }],
  [{ name: '1id', type: 'bigint' }],
  [{ name: '', type: 'bigint' }],
  [{ name: 'c'.repeat(300), type: 'bigint' }],
  [
    { name: 'id', type: 'bigint' },
    { name: 'ID', type: 'varchar' },
  ],
  [{ name: 5, type: 'bigint' }],
  [{ name: 'id', type: 5 }],
];

/** Insert bodies alice.events must refuse whole (some start with valid lines). */
const BAD_CSV_INSERTS = [
  'id,nope\n1,2\n',
  'nope\n1\n',
  'id\nabc\n',
  'id\n1.5\n',
  'id\n99999999999999999999\n',
  'label\nno id\n',
  'id,label\n1\n',
  'id,label\n1,a,b\n',
  'id,label\n1,"unterminated\n',
  'id,id\n1,2\n',
  'id,\n1,2\n',
  'id,amount\n1,1e80\n',
  `id,amount\n1,${'9'.repeat(80)}\n`,
  'id,amount\n1,not a number\n',
  'id,at\n1,2024-13-45 00:00:00\n',
  'id,at\n1,yesterday\n',
  'id,label\n1,fine\n2,fine\nthree,bad\n',
  'id,label\n1,fine\n2,"broken\n',
  '\n',
];

const BAD_NDJSON_INSERTS = [
  '{"id":1',
  '[1,2]\n',
  '"id"\n',
  '1\n',
  '{"id":"x"}\n',
  '{"id":1.5}\n',
  '{"id":1,"id":2}\n',
  '{"nope":1}\n',
  '{"label":"no id"}\n',
  '{"id":1,"label":{"a":1}}\n',
  '{"id":1,"label":[1]}\n',
  '{"id":1,"amount":"1e80"}\n',
  '{"id":1}\n{"id":\n',
  '{"id":1}\n{"id":2}\nnot json\n',
  '{"id":1} {"id":2}\n',
  '{"id":null}\n',
];

// ---------------------------------------------------------------------------------------
// Result parameters

/** Filters that are not in the language, or name columns the result does not have. */
const BAD_FILTERS = [
  '1=1',
  "avs_name = 'x' OR 1=1",
  "avs_name = 'x'; DROP TABLE _service.tables; --",
  "avs_name = 'x' -- comment",
  "avs_name = 'x' /* c */",
  'num_operators > 0; SELECT 1',
  "avs_name = 'unterminated",
  'avs_name = "quoted as identifier"',
  'nope = 1',
  'avs_name IN ()',
  'avs_name IN (SELECT avs_name FROM restaking.avs)',
  'lower(avs_name) = 1',
  'num_operators = NULL',
  'num_operators > avs_name',
  "num_operators > 'abc'",
  'num_operators BETWEEN 1',
  'num_operators >',
  '(num_operators > 1',
  'num_operators > 1)',
  'AND',
  'NOT',
  "avs_name LIKE 'a' ESCAPE '!'",
  'avs_name.length > 1',
  'avs_name[0] = 1',
  'num_operators > 1 ? 1 : 0',
  'this = 1',
  '"unterminated = 1',
  '(((((((((((((((((((((((((((((((((((num_operators > 1)))))))))))))))))))))))))))))))))',
  `avs_name IN (${Array.from({ length: 1001 }, (_, i) => i).join(',')})`,
  `avs_name = '${'x'.repeat(5000)}'`,
  "avs_name = '\u0000'; DROP TABLE x",
  'num_operators > 1 AND AND num_operators < 5',
];

const BAD_SORTS = [
  'nope',
  'avs_name ASCENDING',
  'avs_name;DROP TABLE x',
  'avs_name,',
  ',avs_name',
  '1',
  '(SELECT 1)',
  'avs_name DESC NULLS',
  'avs_name NULLS MIDDLE',
  'random()',
  '"avs_name',
  'avs_name DESC DESC',
];

const BAD_COLUMNS = [
  'nope',
  'avs_name,avs_name',
  'avs_name,,num_operators',
  '"unterminated',
  '*',
  'avs_name; DROP TABLE x',
  'avs_name,"nope"',
  ',',
  'rowid',
];

const BAD_PAGING: [string, string][] = [
  ['limit', '0'],
  ['limit', '-1'],
  ['limit', 'abc'],
  ['limit', '1.5'],
  ['limit', '1e3'],
  ['limit', ''],
  ['limit', '99999999999999999999'],
  ['limit', '0x10'],
  ['offset', '-1'],
  ['offset', 'x'],
  ['offset', '1,2'],
  ['sample_count', '0'],
  ['sample_count', 'ten'],
  ['sample_count', '-3'],
  ['allow_partial_results', 'maybe'],
  ['allow_partial_results', '2'],
  ['ignore_max_datapoints_per_request', 'yes please'],
  ['nope', '1'],
  ['params.x', '1'],
  ['queryid', '3693850'],
  ['LIMIT', '5'],
];

const enc = encodeURIComponent;

/** A query string from pairs, each value percent-encoded. */
const query = (pairs: [string, string][]) =>
  pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&')}`;

/** One wrong thing among otherwise fine result parameters. */
function badResultParams(random: Random): [string, string][] {
  switch (random.int(6)) {
    case 0:
      return [['filters', random.pick(BAD_FILTERS)]];
    case 1:
      return [['sort_by', random.pick(BAD_SORTS)]];
    case 2:
      return [['columns', random.pick(BAD_COLUMNS)]];
    case 3:
      return [random.pick(BAD_PAGING), ['columns', 'avs_name']];
    case 4:
      // sample_count with any of the parameters it excludes.
      return [
        ['sample_count', '3'],
        random.pick<[string, string]>([
          ['limit', '2'],
          ['offset', '1'],
          ['filters', 'num_operators > 0'],
        ]),
      ];
    default:
      // A parameter given twice, however harmless each value is.
      return random.pick<[string, string][]>([
        [
          ['limit', '2'],
          ['limit', '3'],
        ],
        [
          ['columns', 'avs_name'],
          ['columns', 'avs_name'],
        ],
        [
          ['filters', 'num_operators > 0'],
          ['filters', 'num_operators > 1'],
        ],
      ]);
  }
}

// ---------------------------------------------------------------------------------------
// Families

const uploadPath = (random: Random) =>
  `${random.pick(API_PREFIXES)}${random.pick(['/table/upload/csv', '/uploads/csv'])}`;

const families: Record<string, Family> = {
  truncatedUpload: (random) => {
    const text = JSON.stringify({ ...VALID_UPLOAD, data: 'id,label\n1,one\n2,"two, quoted"\n' });
    const cut = random.int(text.length);
    return {
      label: `upload truncated at ${cut}/${text.length}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.from(text.slice(0, cut)),
      },
    };
  },

  brokenJsonUpload: (random) => {
    const body = random.pick(BROKEN_JSON);
    return {
      label: `upload broken JSON ${JSON.stringify(body).slice(0, 60)}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.from(body),
      },
    };
  },

  wrongTypedUpload: (random) => {
    const body = random.pick(WRONG_TYPED_UPLOADS);
    return {
      label: `upload wrong types ${JSON.stringify(body).slice(0, 80)}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.from(JSON.stringify(body)),
      },
    };
  },

  badCsvUpload: (random) => {
    const data = random.pick(BAD_CSV);
    return {
      label: `upload bad CSV ${JSON.stringify(data).slice(0, 60)}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.from(JSON.stringify({ ...VALID_UPLOAD, data })),
      },
    };
  },

  badNameUpload: (random) => {
    const name = random.pick(BAD_NAMES);
    return {
      label: `upload table_name ${JSON.stringify(name).slice(0, 60)}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(anyKey(random)), JSON_TYPE],
        body: Buffer.from(JSON.stringify({ ...VALID_UPLOAD, table_name: name })),
      },
    };
  },

  invalidUtf8Upload: (random) => {
    const bad = random.pick([
      Buffer.from([0xff]),
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xe2, 0x82]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
    ]);
    const where = random.int(3);
    const parts =
      where === 0
        ? [Buffer.from('{"table_name":"notes","data":"id,label\\n1,'), bad, Buffer.from('\\n"}')]
        : where === 1
          ? [Buffer.from('{"table_name":"notes","data":"id,lab'), bad, Buffer.from('el\\n1,2\\n"}')]
          : [Buffer.from('{"table_name":"no'), bad, Buffer.from('tes","data":"id\\n1\\n"}')];
    return {
      label: `upload invalid UTF-8 ${bad.toString('hex')} in ${['a value', 'the header', 'table_name'][where]}`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.concat(parts),
      },
    };
  },

  uploadRefused: (random) => {
    const variant = random.int(5);
    const body = Buffer.from(JSON.stringify(VALID_UPLOAD));
    const cases: [string, [string, string][], string][] = [
      ['text/csv content type', [auth(KEYS.alice), ['Content-Type', 'text/csv']], ''],
      ['form content type', [auth(KEYS.alice), ['Content-Type', 'application/x-www-form-urlencoded']], ''],
      ['no key', [JSON_TYPE], ''],
      ['wrong key', [auth('wrong-key-0000000000'), JSON_TYPE], ''],
      ['unknown query parameter', [auth(KEYS.alice), JSON_TYPE], '?overwrite=true'],
    ];
    const [label, headers, suffix] = cases[variant] as (typeof cases)[number];
    return {
      label: `upload ${label}`,
      request: { method: 'POST', target: `${uploadPath(random)}${suffix}`, headers, body },
    };
  },

  privateUploadOnFreePlan: (random) => ({
    label: 'upload is_private on the free plan',
    request: {
      method: 'POST',
      target: uploadPath(random),
      headers: [auth(KEYS.alice), JSON_TYPE],
      body: Buffer.from(JSON.stringify({ ...VALID_UPLOAD, is_private: true })),
    },
  }),

  oversizedUpload: (random) => {
    // MAX_UPLOAD_BYTES is 1 MB in this test; declared up front, or found while reading.
    const size = 1_000_000 + random.int(500_000);
    const body = Buffer.from(
      JSON.stringify({ ...VALID_UPLOAD, data: `id,label\n${'1,x\n'.repeat(size / 4)}` }),
    );
    return {
      label: `upload of ${body.length} bytes`,
      request: {
        method: 'POST',
        target: uploadPath(random),
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body,
      },
    };
  },

  badCreate: (random) => {
    const variant = random.int(6);
    const base = { namespace: 'alice', table_name: 'fresh_table', schema: SCHEMA, description: 'x' };
    let body: unknown;
    let key: string = writerOfAlice(random);
    let contentType = 'application/json';
    let label: string;
    if (variant === 0) {
      body = { ...base, schema: random.pick(BAD_SCHEMAS) };
      label = `schema ${JSON.stringify((body as { schema: unknown }).schema).slice(0, 60)}`;
    } else if (variant === 1) {
      body = { ...base, table_name: random.pick(BAD_NAMES) };
      label = `table_name ${JSON.stringify((body as { table_name: unknown }).table_name).slice(0, 60)}`;
    } else if (variant === 2) {
      body = { ...base, namespace: random.pick(BAD_NAMESPACES) };
      label = `namespace ${JSON.stringify((body as { namespace: unknown }).namespace)}`;
    } else if (variant === 3) {
      // Writes into another account's namespace, or the shared one, without admin rights.
      key = KEYS.alice;
      body = { ...base, namespace: random.pick(['bob', 'restaking', 'root']) };
      label = `into ${(body as { namespace: string }).namespace} as alice`;
    } else if (variant === 4) {
      body = random.pick<unknown>([
        { ...base, is_private: 'yes' },
        { ...base, description: 7 },
        { ...base, namespace: 5 },
        { ...base, table_name: null },
        { namespace: 'alice', table_name: 'fresh_table' },
        [base],
        'create',
        { ...base, schema: undefined },
        // An existing table with another schema: a conflict, never a silent change.
        { ...base, table_name: 'events' },
        { ...base, table_name: 'dataset_notes' },
      ]);
      if (random.int(2) === 0) {
        key = KEYS.alice;
        body = { ...base, is_private: true };
      }
      label = `fields ${JSON.stringify(body).slice(0, 60)}`;
    } else {
      body = base;
      contentType = random.pick(['text/plain', 'text/csv', 'multipart/form-data; boundary=x']);
      label = `content type ${contentType}`;
    }
    return {
      label: `create ${label}`,
      request: {
        method: 'POST',
        target: `${random.pick(API_PREFIXES)}${random.pick(['/table/create', '/uploads'])}`,
        headers: [auth(key), ['Content-Type', contentType]],
        body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      },
    };
  },

  brokenJsonCreate: (random) => {
    const text = JSON.stringify({ namespace: 'alice', table_name: 'fresh_table', schema: SCHEMA });
    const body = random.int(2) === 0 ? text.slice(0, random.int(text.length)) : random.pick(BROKEN_JSON);
    return {
      label: `create broken JSON ${JSON.stringify(body).slice(0, 60)}`,
      request: {
        method: 'POST',
        target: `${random.pick(API_PREFIXES)}/table/create`,
        headers: [auth(writerOfAlice(random)), JSON_TYPE],
        body: Buffer.from(body),
      },
    };
  },

  badInsert: (random) => {
    const ndjson = random.int(2) === 0;
    const body = ndjson ? random.pick(BAD_NDJSON_INSERTS) : random.pick(BAD_CSV_INSERTS);
    const base = random.pick(['/table', '/uploads']);
    return {
      label: `insert ${ndjson ? 'NDJSON' : 'CSV'} ${JSON.stringify(body).slice(0, 60)}`,
      request: {
        method: 'POST',
        target: `${random.pick(API_PREFIXES)}${base}/alice/events/insert`,
        headers: [
          auth(writerOfAlice(random)),
          ['Content-Type', ndjson ? 'application/x-ndjson' : 'text/csv'],
        ],
        body: Buffer.from(body),
      },
    };
  },

  insertRefused: (random) => {
    const good = Buffer.from('id,label\n100,fine\n');
    const variant = random.int(8);
    let target = '/alice/events/insert';
    let key: string = KEYS.alice;
    let contentType = 'text/csv';
    let label: string;
    if (variant === 0) {
      contentType = random.pick([
        'application/json',
        'text/plain',
        'text/csv; charset=latin1',
        'application/octet-stream',
        '',
      ]);
      label = `content type ${JSON.stringify(contentType)}`;
    } else if (variant === 1) {
      target = random.pick(['/bob/secrets/insert', '/restaking/avs/insert', '/root/anything/insert']);
      label = `alice into ${target}`;
    } else if (variant === 2) {
      key = random.pick([KEYS.alice, KEYS.admin]);
      target = random.pick([
        '/alice/nothing_here/insert',
        '/nobody/events/insert',
        '/alice/dataset_notes/insert',
      ]);
      label = `into a missing or uploaded table ${target}`;
    } else if (variant === 3) {
      target = `/${enc(random.pick(BAD_NAMESPACES))}/events/insert`;
      label = `bad namespace ${target.slice(0, 60)}`;
    } else if (variant === 4) {
      target = `/alice/${enc(random.pick(BAD_NAMES))}/insert`;
      label = `bad table name ${target.slice(0, 60)}`;
    } else if (variant === 5) {
      target = `/alice/events/insert?${random.pick(['mode=replace', 'api_key_x=1', 'format=csv'])}`;
      label = `unknown query parameter ${target}`;
    } else if (variant === 6) {
      key = random.pick(['', 'x', 'wrong-key-0000000000', KEYS.alice.toUpperCase()]);
      label = `key ${JSON.stringify(key)}`;
    } else {
      // An NDJSON body sent as CSV and the other way round.
      contentType = random.pick(['application/x-ndjson']);
      label = 'CSV body declared as NDJSON';
    }
    return {
      label: `insert ${label}`,
      request: {
        method: 'POST',
        target: `${random.pick(API_PREFIXES)}/table${target}`,
        headers: [auth(key), ...(contentType ? [['Content-Type', contentType] as [string, string]] : [])],
        body: good,
      },
    };
  },

  clearOrDeleteRefused: (random) => {
    const clear = random.int(2) === 0;
    const variant = random.int(5);
    let ref = 'alice/events';
    let key: string = KEYS.alice;
    let suffix = '';
    if (variant === 0) {
      ref = random.pick(['bob/secrets', 'restaking/avs', 'restaking/strategies', 'root/x']);
    } else if (variant === 1) {
      key = random.pick([KEYS.alice, KEYS.admin]);
      ref = random.pick(['alice/nothing_here', 'nobody/events', 'bob/nothing']);
    } else if (variant === 2) {
      ref = `${enc(random.pick(BAD_NAMESPACES))}/events`;
    } else if (variant === 3) {
      ref = `alice/${enc(random.pick(BAD_NAMES))}`;
    } else {
      suffix = random.pick(['?force=true', '?cascade=1', '?limit=1']);
      key = random.pick([KEYS.alice, KEYS.admin]);
    }
    if (variant === 0 && ref.startsWith('bob/') && random.int(2) === 0) key = KEYS.carol;
    const base = random.pick(['/table', '/uploads']);
    return {
      label: `${clear ? 'clear' : 'delete'} ${ref}${suffix}`,
      request: clear
        ? {
            method: 'POST',
            target: `${random.pick(API_PREFIXES)}${base}/${ref}/clear${suffix}`,
            headers: [auth(key)],
          }
        : {
            method: 'DELETE',
            target: `${random.pick(API_PREFIXES)}${base}/${ref}${suffix}`,
            headers: [auth(key)],
          },
    };
  },

  badMetricsParams: (random) => {
    const variant = random.int(3);
    let pairs: [string, string][];
    if (variant === 0) pairs = [['queryID', '3693850'], ...badResultParams(random)];
    else if (variant === 1)
      pairs = random.pick<[string, string][]>([
        [],
        [['queryID', '']],
        [['queryID', 'abc']],
        [['queryID', '1']],
        [['queryID', '3693851']],
        [['queryID', '-3693850']],
        [['queryID', '3693850.0']],
        [['queryID', '3693850; DROP TABLE x']],
        [
          ['queryID', '3693850'],
          ['queryID', '3693850'],
        ],
        [['queryid', '3693850']],
      ]);
    else pairs = [['queryID', '3693850'], ['columns', 'avs_name'], random.pick(BAD_PAGING)];
    return {
      label: `avs-stats ${query(pairs).slice(0, 80)}`,
      request: {
        method: 'GET',
        target: `${random.pick(API_PREFIXES)}/restaking/avs-stats${query(pairs)}`,
        headers: [auth(anyKey(random))],
      },
    };
  },

  badResultsParams: (random, context) => {
    const format = random.pick(['', '/csv', '/parquet']);
    const path = random.pick([
      `/query/3693850/results${format}`,
      `/execution/${context.executionId}/results${format}`,
    ]);
    const pairs = badResultParams(random);
    return {
      label: `${path} ${query(pairs).slice(0, 80)}`,
      request: {
        method: 'GET',
        target: `${random.pick(API_PREFIXES)}${path}${query(pairs)}`,
        headers: [auth(anyKey(random))],
      },
    };
  },

  badIds: (random) => {
    const id = random.pick([
      'abc',
      '-1',
      '0',
      '99999999999999999999',
      '1e5',
      '%00',
      '..%2F..%2Fetc%2Fpasswd',
      '3693850%3B%20DROP%20TABLE%20x',
      '01NOSUCHEXECUTION000000000',
      `01${'Z'.repeat(5000)}`,
      '%FF%FE',
      "'%20OR%20'1'%3D'1",
    ]);
    const path = random.pick([
      `/query/${id}/results`,
      `/query/${id}/results/csv`,
      `/query/${id}/results/parquet`,
      `/query/${id}/execute`,
      `/execution/${id}/results`,
      `/execution/${id}/results/csv`,
      `/execution/${id}/results/parquet`,
      `/execution/${id}/status`,
      `/execution/${id}/cancel`,
    ]);
    return {
      label: `unknown id ${path.slice(0, 80)}`,
      request: {
        method: path.endsWith('/execute') || path.endsWith('/cancel') ? 'POST' : 'GET',
        target: `${random.pick(API_PREFIXES)}${path}`,
        headers: [auth(anyKey(random))],
      },
    };
  },

  badExecute: (random, context) => {
    const variant = random.int(4);
    if (variant === 0) {
      const body = random.pick([
        '{',
        '{"query_parameters":{"x":1}}',
        '{"query_parameters":[{"key":"x","value":"1"}]}',
        '{"query_parameters":"x"}',
        '[]',
        '"x"',
        '42',
        'null',
        '{"query_parameters":{}',
      ]);
      return {
        label: `execute body ${body}`,
        request: {
          method: 'POST',
          target: `${random.pick(API_PREFIXES)}/query/3693850/execute`,
          headers: [auth(anyKey(random)), JSON_TYPE],
          body: Buffer.from(body),
        },
      };
    }
    if (variant === 1) {
      const suffix = random.pick(['?foo=1', '?performance=medium&performance=large', '?params.x=1']);
      return {
        label: `execute ${suffix}`,
        request: {
          method: 'POST',
          target: `${random.pick(API_PREFIXES)}/query/3693850/execute${suffix}`,
          headers: [auth(anyKey(random))],
        },
      };
    }
    if (variant === 2) {
      return {
        label: 'execute with a body over 64 KB',
        request: {
          method: 'POST',
          target: `${random.pick(API_PREFIXES)}/query/3693850/execute`,
          headers: [auth(anyKey(random)), JSON_TYPE],
          body: Buffer.from(JSON.stringify({ query_parameters: {}, padding: 'x'.repeat(70_000) })),
        },
      };
    }
    const suffix = random.pick(['?x=1', '?force=true']);
    return {
      label: `cancel or status with ${suffix}`,
      request: {
        method: random.int(2) === 0 ? 'POST' : 'GET',
        target: `${random.pick(API_PREFIXES)}/execution/${context.executionId}/${random.int(2) === 0 ? 'cancel' : 'status'}${suffix}`,
        headers: [auth(anyKey(random))],
      },
    };
  },

  badListing: (random) => {
    const pairs = random.pick<[string, string][]>([
      [['limit', '0']],
      [['limit', '10001']],
      [['limit', 'abc']],
      [['offset', '-1']],
      [['offset', '1.5']],
      [['owner', 'alice']],
      [
        ['limit', '1'],
        ['limit', '2'],
      ],
      [['limit', '99999999999999999999']],
    ]);
    const path = random.pick(['/tables', '/uploads', '/account']);
    const extra = path === '/account' ? [['x', '1'] as [string, string]] : pairs;
    return {
      label: `${path}${query(extra)}`,
      request: {
        method: 'GET',
        target: `${random.pick(API_PREFIXES)}${path}${query(extra)}`,
        headers: [auth(anyKey(random))],
      },
    };
  },

  wrongMethod: (random, context) => {
    const routes: [string, string[]][] = [
      ['/health', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/metrics', ['POST', 'PUT', 'DELETE']],
      ['/settings/data', ['POST', 'PUT', 'DELETE']],
      ['/', ['POST', 'PUT', 'DELETE']],
      ['/assets/workspace.js', ['POST', 'DELETE']],
      ['/v1/account', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/v1/tables', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/v1/uploads', ['PUT', 'DELETE', 'PATCH']],
      ['/api/v1/table/upload/csv', ['GET', 'PUT', 'DELETE', 'PATCH']],
      ['/v1/uploads/csv', ['GET', 'PUT', 'DELETE']],
      ['/v1/table/create', ['GET', 'PUT', 'DELETE']],
      ['/v1/table/alice/events', ['POST', 'PUT', 'PATCH']],
      ['/v1/table/alice/events/insert', ['GET', 'PUT', 'DELETE', 'PATCH']],
      ['/v1/uploads/alice/events/clear', ['GET', 'PUT', 'DELETE']],
      ['/v1/restaking/avs-stats?queryID=3693850', ['POST', 'PUT', 'DELETE', 'PATCH']],
      ['/v1/query/3693850/results', ['POST', 'PUT', 'DELETE']],
      ['/v1/query/3693850/results/csv', ['POST', 'DELETE']],
      ['/v1/query/3693850/results/parquet', ['POST', 'PUT', 'DELETE']],
      ['/v1/query/3693850/execute', ['GET', 'PUT', 'DELETE']],
      // DELETE drops a result (DESIGN §12): not a wrong method here.
      [`/v1/execution/${context.executionId}/results`, ['POST', 'PUT', 'PATCH']],
      [`/v1/execution/${context.executionId}/results/parquet`, ['POST', 'DELETE']],
      [`/v1/execution/${context.executionId}/status`, ['POST', 'DELETE']],
      [`/v1/execution/${context.executionId}/cancel`, ['GET', 'DELETE']],
    ];
    const [path, methods] = random.pick(routes);
    const method = random.pick([...methods, 'PROPFIND', 'MKCOL', 'PURGE']);
    return { label: `${method} ${path}`, request: { method, target: path, headers: [auth(anyKey(random))] } };
  },

  strangePaths: (random) => {
    const target = random.pick<string | Buffer>([
      '/v1/table/..%2F..%2Fetc/passwd/insert',
      '/v1/../../etc/passwd',
      '/settings/../package.json',
      '/settings/..%2F..%2Fpackage.json',
      '/settings/%2e%2e/%2e%2e/package.json',
      '/settings/..%5c..%5cpackage.json',
      '/settings/%00',
      '/settings/data%00.html',
      '/v1/tables/../tables',
      '//v1/tables',
      '/v1//tables',
      '/v1/TABLES',
      '/v1/table/alice/%00/insert',
      '/v1/table/%FF/events',
      '/v1/query/%E0%A4%A/results',
      '/v1/table/alice/events/insert/..',
      `/v1/${'a/'.repeat(2000)}`,
      '/.env',
      '/.git/config',
      '/v1/tables;jsessionid=1',
      '/%2e%2e/%2e%2e/etc/passwd',
      Buffer.from('/v1/t\xffbles', 'latin1'),
      Buffer.from('/settings/\xc3\x28', 'latin1'),
      '*',
      Buffer.from('/v1/restaking/avs-stats?queryID=3693850&columns=\xff\xfe', 'latin1'),
      '/v1/restaking/avs-stats?queryID=3693850&columns=%FF%FE',
      '/v1/restaking/avs-stats?queryID=3693850&filters=avs_name%20%3D%20%27%C3%28%27%20AND%20%FF',
    ]);
    const method = random.pick(['GET', 'POST', 'DELETE']);
    return {
      label: `${method} ${target.toString().slice(0, 80)}`,
      request: {
        method,
        target,
        headers: [auth(anyKey(random))],
        ...(method === 'POST' ? { body: Buffer.from('{}') } : {}),
      },
    };
  },

  badKeys: (random) => {
    const variant = random.int(6);
    const target = `${random.pick(API_PREFIXES)}${random.pick(['/tables', '/account', '/restaking/avs-stats?queryID=3693850', '/query/3693850/results'])}`;
    const headers: [string, string | Buffer][] = [];
    let path = target;
    if (variant === 0) headers.push(['X-Service-Api-Key', '']);
    else if (variant === 1) headers.push(['X-Service-Api-Key', 'k'.repeat(8000)]);
    else if (variant === 2) headers.push(['X-Service-Api-Key', Buffer.from([0x61, 0xff, 0xfe, 0x62])]);
    else if (variant === 3) headers.push(['X-Dune-Api-Key', `${KEYS.alice} `.repeat(2)]);
    else if (variant === 4)
      path = `${target}${target.includes('?') ? '&' : '?'}api_key=${enc("' OR 1=1 --")}`;
    else headers.push(['Authorization', `Bearer ${KEYS.admin}`]);
    return {
      label: `key variant ${variant} on ${target}`,
      request: { method: 'GET', target: path, headers },
    };
  },

  hugeInputs: (random) => {
    const variant = random.int(4);
    if (variant === 0) {
      return {
        label: 'a 20 KB header',
        request: {
          method: 'GET',
          target: '/v1/tables',
          headers: [auth(KEYS.alice), ['X-Padding', 'p'.repeat(20_000)]],
        },
      };
    }
    if (variant === 1) {
      return {
        label: 'a 20 KB URL',
        request: {
          method: 'GET',
          target: `/v1/restaking/avs-stats?queryID=3693850&filters=${'x'.repeat(20_000)}`,
          headers: [auth(KEYS.alice)],
        },
      };
    }
    if (variant === 2) {
      return {
        label: 'a 10 KB filter',
        request: {
          method: 'GET',
          target: `/v1/restaking/avs-stats?queryID=3693850&filters=${enc(`avs_name IN (${Array.from({ length: 900 }, () => "'abcdefgh'").join(',')})`)}`,
          headers: [auth(KEYS.alice)],
        },
      };
    }
    return {
      label: '300 headers of 100 bytes',
      request: {
        method: 'GET',
        target: '/v1/tables',
        headers: [
          auth(KEYS.alice),
          ...Array.from({ length: 300 }, (_, i) => [`X-H${i}`, 'h'.repeat(100)] as [string, string]),
        ],
      },
    };
  },

  brokenFraming: (random) => {
    const body = Buffer.from(JSON.stringify(VALID_UPLOAD));
    const variant = random.int(6);
    const headers: [string, string][] = [auth(KEYS.alice), JSON_TYPE];
    let payload = body;
    let label: string;
    if (variant === 0) {
      headers.push(['Transfer-Encoding', 'chunked']);
      payload = Buffer.from(`zz\r\n${body.toString()}\r\n0\r\n\r\n`);
      label = 'bad chunk size';
    } else if (variant === 1) {
      headers.push(['Transfer-Encoding', 'chunked'], ['Content-Length', String(body.length)]);
      payload = Buffer.from(`${body.length.toString(16)}\r\n${body.toString()}\r\n0\r\n\r\n`);
      label = 'both Transfer-Encoding and Content-Length';
    } else if (variant === 2) {
      headers.push(['Content-Length', 'abc']);
      label = 'Content-Length abc';
    } else if (variant === 3) {
      headers.push(['Content-Length', String(body.length)], ['Content-Length', String(body.length + 5)]);
      label = 'two different Content-Length headers';
    } else if (variant === 4) {
      headers.push(['Content-Length', '-1']);
      label = 'Content-Length -1';
    } else {
      // Well-framed chunks around a truncated JSON body: the framing is fine, the content is not.
      headers.push(['Transfer-Encoding', 'chunked']);
      const cut = body.subarray(0, 1 + random.int(body.length - 1));
      payload = Buffer.from(`${cut.length.toString(16)}\r\n${cut.toString()}\r\n0\r\n\r\n`);
      label = `chunked, truncated at ${cut.length}`;
    }
    return {
      label: `upload framing: ${label}`,
      request: {
        method: 'POST',
        target: '/v1/table/upload/csv',
        headers,
        body: payload,
        framing: 'as-given',
      },
    };
  },

  badRequestLine: (random) => {
    const line = random.pick([
      'GET /v1/tables HTTP/9.9',
      'GET /v1/tables',
      'GET  /v1/tables HTTP/1.1',
      'G\x01T /v1/tables HTTP/1.1',
      'GET /v1/ta bles HTTP/1.1',
      'GET /v1/tables\x00 HTTP/1.1',
    ]);
    return {
      label: `request line ${JSON.stringify(line)}`,
      request: {
        method: '',
        target: '',
        raw: Buffer.from(`${line}\r\nHost: x\r\nConnection: close\r\n\r\n`, 'latin1'),
      },
    };
  },

  badHeaders: (random) => {
    const header = random.pick<[string, string | Buffer]>([
      ['Bad Header', 'x'],
      ['X-Ctl', Buffer.from('a\x01b', 'latin1')],
      ['X-Nul', Buffer.from('a\x00b', 'latin1')],
      ['', 'x'],
      ['X-Cr', Buffer.from('a\rb', 'latin1')],
    ]);
    return {
      label: `header ${JSON.stringify(header[0])}`,
      request: { method: 'GET', target: '/v1/tables', headers: [auth(KEYS.alice), header] },
    };
  },
};

export const FAMILIES = Object.keys(families);

/** `count` cases, round-robin over the families so each gets its share. */
export function hostileCases(seed: number, count: number, context: Context): HostileCase[] {
  const random = seededRandom(seed);
  const names = Object.keys(families);
  const cases: HostileCase[] = [];
  for (let i = 0; i < count; i++) {
    const family = names[i % names.length] as string;
    cases.push({ family, ...(families[family] as Family)(random, context) });
  }
  return cases;
}
