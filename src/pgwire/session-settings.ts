import packageJson from '../../package.json' with { type: 'json' };

/**
 * The run-time parameters of a session (PostgreSQL's GUCs) as clients set and read them:
 * `SET`, `SHOW`, `RESET`, the start-up packet's options and the ParameterStatus messages.
 * They live in the session only: DuckDB's configuration is locked (DESIGN §10) and nothing
 * here reaches it. Values that would change how results are written, which this server
 * cannot honour (a DateStyle other than ISO, IntervalStyle other than postgres), are refused.
 */

/** The PostgreSQL version clients are told, for the catalog queries they choose by version. */
export const SERVER_VERSION = '15.0';
export const SERVER_VERSION_NUM = '150000';

/** `version()`: PostgreSQL-compatible for the drivers that parse it (SQLAlchemy), naming this service. */
export const VERSION_TEXT = `PostgreSQL ${SERVER_VERSION} (restaking-data-service ${packageJson.version}, DuckDB inside) on x86_64-pc-linux-gnu, 64-bit`;

export class SettingError extends Error {
  override name = 'SettingError';
  constructor(
    message: string,
    readonly sqlState: string,
  ) {
    super(message);
  }
}

interface Setting {
  /** PostgreSQL's spelling, which SHOW uses for its column. */
  name: string;
  initial: string;
  /** Sent as ParameterStatus at start and whenever it changes. */
  reported?: boolean;
  readOnly?: boolean;
  /** The value as stored, or a SettingError. */
  check?: (value: string) => string;
}

const invalid = (name: string, value: string, hint = '') =>
  new SettingError(`invalid value for parameter "${name}": "${value}"${hint}`, '22023');

const onOff = (name: string) => (value: string) => {
  const v = value.toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return 'on';
  if (['off', 'false', 'no', '0'].includes(v)) return 'off';
  throw invalid(name, value);
};

const only = (name: string, allowed: string, hint: string) => (value: string) => {
  if (value.toLowerCase() !== allowed.toLowerCase()) throw invalid(name, value, `; ${hint}`);
  return allowed;
};

/** A duration in milliseconds, as statement_timeout takes it (`5000`, `5s`, `1min`). */
export function durationMs(name: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|h|d)?\s*$/i.exec(value);
  if (!match) throw invalid(name, value);
  const unit = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 }[
    (match[2] ?? 'ms').toLowerCase() as 'ms'
  ];
  const ms = Math.round(Number(match[1]) * unit);
  if (ms > 2_147_483_647) throw invalid(name, value);
  return ms;
}

const SETTINGS: readonly Setting[] = [
  { name: 'application_name', initial: '', reported: true },
  // Every text goes out in UTF-8 whatever the client asks (libpq asks SQL_ASCII under the C locale).
  { name: 'client_encoding', initial: 'UTF8', reported: true, check: () => 'UTF8' },
  {
    name: 'DateStyle',
    initial: 'ISO, MDY',
    reported: true,
    check: (value) => {
      if (!/^\s*iso\b/i.test(value) && !/^\s*(mdy|dmy|ymd)\s*,\s*iso\s*$/i.test(value))
        throw invalid('DateStyle', value, '; dates are written in ISO style only');
      return 'ISO, MDY';
    },
  },
  {
    name: 'default_transaction_read_only',
    initial: 'on',
    reported: true,
    check: onOff('default_transaction_read_only'),
  },
  { name: 'in_hot_standby', initial: 'off', reported: true, readOnly: true },
  { name: 'integer_datetimes', initial: 'on', reported: true, readOnly: true },
  {
    name: 'IntervalStyle',
    initial: 'postgres',
    reported: true,
    check: only('IntervalStyle', 'postgres', 'intervals are written in postgres style only'),
  },
  { name: 'is_superuser', initial: 'off', reported: true, readOnly: true },
  { name: 'server_encoding', initial: 'UTF8', reported: true, readOnly: true },
  { name: 'server_version', initial: SERVER_VERSION, reported: true, readOnly: true },
  { name: 'server_version_num', initial: SERVER_VERSION_NUM, readOnly: true },
  { name: 'session_authorization', initial: '', reported: true, readOnly: true },
  {
    name: 'standard_conforming_strings',
    initial: 'on',
    reported: true,
    check: only('standard_conforming_strings', 'on', 'backslashes in strings are always literal'),
  },
  // Timestamps with time zone are written in UTC with their offset (+00), whatever the zone.
  { name: 'TimeZone', initial: 'UTC', reported: true },
  {
    name: 'bytea_output',
    initial: 'hex',
    check: only('bytea_output', 'hex', 'bytea is written in hex only'),
  },
  {
    name: 'extra_float_digits',
    initial: '1',
    check: (value) => {
      if (!/^\s*-?\d+\s*$/.test(value) || Number(value) < -15 || Number(value) > 3)
        throw invalid('extra_float_digits', value);
      return String(Number(value));
    },
  },
  {
    name: 'statement_timeout',
    initial: '0',
    check: (value) => String(durationMs('statement_timeout', value)),
  },
  { name: 'lock_timeout', initial: '0' },
  { name: 'idle_in_transaction_session_timeout', initial: '0' },
  { name: 'idle_session_timeout', initial: '0' },
  { name: 'search_path', initial: '"$user", public' },
  { name: 'client_min_messages', initial: 'notice' },
  { name: 'default_transaction_isolation', initial: 'read committed' },
  { name: 'transaction_isolation', initial: 'read committed' },
  { name: 'transaction_read_only', initial: 'on', readOnly: true },
  { name: 'default_transaction_deferrable', initial: 'off' },
  { name: 'transaction_deferrable', initial: 'off' },
  { name: 'row_security', initial: 'on' },
  { name: 'jit', initial: 'off' },
  { name: 'work_mem', initial: '4MB' },
  { name: 'max_identifier_length', initial: '63', readOnly: true },
  { name: 'max_index_keys', initial: '32', readOnly: true },
  { name: 'block_size', initial: '8192', readOnly: true },
  { name: 'lc_collate', initial: 'C.UTF-8', readOnly: true },
  { name: 'lc_ctype', initial: 'C.UTF-8', readOnly: true },
  { name: 'lc_messages', initial: 'C.UTF-8' },
  { name: 'lc_monetary', initial: 'C.UTF-8' },
  { name: 'lc_numeric', initial: 'C.UTF-8' },
  { name: 'lc_time', initial: 'C.UTF-8' },
  { name: 'escape_string_warning', initial: 'on' },
  { name: 'synchronize_seqscans', initial: 'on' },
  { name: 'timezone_abbreviations', initial: 'Default' },
  { name: 'max_connections', initial: '100', readOnly: true },
];

const BY_NAME = new Map(SETTINGS.map((s) => [s.name.toLowerCase(), s]));

export class SessionSettings {
  private readonly values = new Map<string, string>();
  /** Parameters changed since the last `takeChanges`, for ParameterStatus. */
  private changed = new Set<string>();

  constructor(user: string) {
    this.values.set('session_authorization', user);
  }

  /** ParameterStatus pairs sent after authentication. */
  reported(): [string, string][] {
    return SETTINGS.filter((s) => s.reported).map((s) => [s.name, this.get(s.name)]);
  }

  get(name: string): string {
    const setting = BY_NAME.get(name.toLowerCase());
    return this.values.get(name.toLowerCase()) ?? setting?.initial ?? '';
  }

  /** SHOW's column name and value; a SettingError for an unknown parameter. */
  show(name: string): { column: string; value: string } {
    const setting = this.setting(name);
    if (!setting) {
      const custom = this.values.get(name.toLowerCase());
      if (custom !== undefined) return { column: name.toLowerCase(), value: custom };
      throw unknown(name);
    }
    return { column: setting.name, value: this.get(setting.name) };
  }

  all(): { name: string; setting: string }[] {
    return SETTINGS.map((s) => ({ name: s.name, setting: this.get(s.name) }));
  }

  /** SET name = value (start-up options too); `undefined` value is RESET. */
  set(name: string, value: string | undefined): void {
    const key = name.toLowerCase();
    const setting = this.setting(name);
    if (!setting) {
      // PostgreSQL takes any two-part name (`myapp.option`) as a custom setting.
      if (!key.includes('.')) throw unknown(name);
      if (value === undefined) this.values.delete(key);
      else this.values.set(key, value);
      return;
    }
    if (setting.readOnly) throw new SettingError(`parameter "${setting.name}" cannot be changed`, '55P02');
    const stored = value === undefined ? setting.initial : (setting.check?.(value) ?? value);
    if (stored === this.get(setting.name)) return;
    this.values.set(key, stored);
    if (setting.reported) this.changed.add(setting.name);
  }

  /** Reported parameters whose value changed since the last call, with their values. */
  takeChanges(): [string, string][] {
    const changes = [...this.changed].map((name): [string, string] => [name, this.get(name)]);
    this.changed = new Set();
    return changes;
  }

  /** The session's statement_timeout in milliseconds; 0 is none. */
  get statementTimeoutMs(): number {
    return Number(this.get('statement_timeout'));
  }

  private setting(name: string): Setting | undefined {
    return BY_NAME.get(name.toLowerCase());
  }
}

const unknown = (name: string) => new SettingError(`unrecognized configuration parameter "${name}"`, '42704');
