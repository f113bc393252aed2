import { badRequest } from '../errors.js';

/**
 * Query parameters (DESIGN §10): `{{name}}` in a query's SQL, declared with a type and a
 * default value. As on the mirrored API, `{{name}}` is replaced by the value's text and the
 * SQL supplies any quotes (`'{{color}}'`, `timestamp '{{since}}'`, `{{n}}`); each value is
 * checked against its type first and written in one canonical form, which is also how
 * parameter sets are compared (`7` and `7.0` are one set).
 */

export const PARAMETER_TYPES = ['text', 'number', 'datetime', 'enum'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export interface QueryParameter {
  key: string;
  type: ParameterType;
  /** The default value, canonical. */
  value: string;
  /** For enums: the allowed values; none means any text. */
  enumOptions?: string[];
}

const MAX_PARAMETERS = 100;
const MAX_KEY_CHARS = 100;
const MAX_VALUE_CHARS = 100_000;
const MAX_ENUM_OPTIONS = 1_000;
/** A canonical number longer than this is refused (1e400 would be 401 digits of text). */
const MAX_NUMBER_CHARS = 100;

/** `{{ name }}`: the name is what lies between the braces, without surrounding spaces. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

const show = (value: unknown) => JSON.stringify(value)?.slice(0, 80) ?? String(value);

function checkKey(key: unknown, where: string): string {
  if (typeof key !== 'string') throw badRequest(`${where}: "key" must be a string`);
  if (key === '' || key.length > MAX_KEY_CHARS || key !== key.trim() || /[{}\p{Cc}]/u.test(key)) {
    throw badRequest(
      `${where}: parameter name ${show(key)} must be 1 to ${MAX_KEY_CHARS} characters, without braces, control characters or surrounding spaces`,
    );
  }
  return key;
}

function checkText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw badRequest(`${what} must be a string, got ${show(value)}`);
  if (value.length > MAX_VALUE_CHARS)
    throw badRequest(`${what} is longer than ${MAX_VALUE_CHARS} characters`);
  if (value.includes('\u0000')) throw badRequest(`${what} contains a NUL character`);
  return value;
}

/**
 * A number as exact decimal text without exponent, sign or zeros that say nothing:
 * `+7.50` → `7.5`, `1e3` → `1000`, `-0` → `0`. Exact, so 20-digit integers survive.
 */
export function canonicalNumber(text: string): string | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  let scale = Number(exponent) - fraction.length; // value = digits × 10^scale
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  scale += trailing;
  if (digits === '') return '0';
  if (Math.abs(scale) > MAX_NUMBER_CHARS) return undefined;
  let plain: string;
  if (scale >= 0) plain = digits + '0'.repeat(scale);
  else {
    const point = digits.length + scale;
    plain =
      point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`;
  }
  const result = sign === '-' ? `-${plain}` : plain;
  return result.length > MAX_NUMBER_CHARS ? undefined : result;
}

const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * A timestamp as `YYYY-MM-DD HH:MM:SS` (UTC): from that form, a date alone, or ISO 8601
 * with `T`, fractions of a second (dropped, as the canonical form has none) and an offset
 * (converted to UTC).
 */
export function canonicalDatetime(text: string): string | undefined {
  const match = DATETIME.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map((p) => Number(p ?? 0));
  const offset = match[7];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return undefined; // 2023-02-30 rolled over into March
  date.setUTCHours(hour, minute, second, 0);
  if (offset && offset.toUpperCase() !== 'Z') {
    const digits = offset.replace(':', '');
    const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
    if (Number(digits.slice(1, 3)) > 23 || Number(digits.slice(3, 5)) > 59) return undefined;
    date.setTime(date.getTime() - (digits[0] === '-' ? -minutes : minutes) * 60_000);
  }
  const y = date.getUTCFullYear();
  if (y < 0 || y > 9999) return undefined;
  return `${pad(y, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}

/** The value in canonical form, or a 400 that names the parameter and says what it needs. */
export function checkValue(parameter: Omit<QueryParameter, 'value'>, value: unknown, where: string): string {
  const what = `${where}: parameter "${parameter.key}" (${parameter.type})`;
  switch (parameter.type) {
    case 'text':
      return checkText(value, `${what} value`);
    case 'number': {
      if (typeof value === 'number') {
        // A JSON number has been through a double already: past 2^53 its digits may be gone.
        if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
          throw badRequest(`${what} needs a finite number; send integers beyond 2^53 as strings`);
        return canonicalNumber(String(value)) as string;
      }
      const number = typeof value === 'string' ? canonicalNumber(value) : undefined;
      if (number === undefined)
        throw badRequest(
          `${what} needs a finite number such as 42, -1.5 or 2.5e-3 (at most ${MAX_NUMBER_CHARS} digits), got ${show(value)}`,
        );
      return number;
    }
    case 'datetime': {
      const datetime = typeof value === 'string' ? canonicalDatetime(value) : undefined;
      if (datetime === undefined)
        throw badRequest(
          `${what} needs a timestamp such as "2024-01-31 12:00:00" or "2024-01-31", got ${show(value)}`,
        );
      return datetime;
    }
    case 'enum': {
      const text = checkText(value, `${what} value`);
      const options = parameter.enumOptions ?? [];
      if (options.length > 0 && !options.includes(text))
        throw badRequest(
          `${what} must be one of ${options
            .slice(0, 20)
            .map((o) => show(o))
            .join(', ')}${options.length > 20 ? ', …' : ''}; got ${show(text)}`,
        );
      return text;
    }
  }
}

function checkType(type: unknown, where: string): ParameterType {
  if (type === 'date') return 'datetime'; // The TypeScript client's name for it.
  if (typeof type !== 'string' || !(PARAMETER_TYPES as readonly string[]).includes(type))
    throw badRequest(
      `${where}: "type" must be one of ${PARAMETER_TYPES.join(', ')} or date, got ${show(type)}`,
    );
  return type as ParameterType;
}

function checkEnumOptions(options: unknown, where: string): string[] | undefined {
  if (options === undefined || options === null) return undefined;
  if (!Array.isArray(options) || options.length > MAX_ENUM_OPTIONS)
    throw badRequest(`${where}: "enumOptions" must be a list of at most ${MAX_ENUM_OPTIONS} strings`);
  return options.map((option, i) => checkText(option, `${where}: enumOptions[${i}]`));
}

const LIST_FIELDS = new Set(['key', 'name', 'type', 'value', 'enumOptions']);

/**
 * The list form (the Python client): `[{key, type, value, enumOptions?}]`; `name` is taken
 * for `key` (the TypeScript client's QueryParameter objects carry `name`).
 */
export function parseParameterList(list: unknown, field: string): QueryParameter[] {
  if (!Array.isArray(list)) throw badRequest(`field "${field}" must be a list of {key, type, value}`);
  if (list.length > MAX_PARAMETERS)
    throw badRequest(`field "${field}" holds more than ${MAX_PARAMETERS} parameters`);
  const parameters = list.map((item, i): QueryParameter => {
    const where = `${field}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw badRequest(`${where} must be an object {key, type, value}`);
    const entry = item as Record<string, unknown>;
    const unknown = Object.keys(entry).find((k) => !LIST_FIELDS.has(k));
    if (unknown !== undefined)
      throw badRequest(
        `${where}: unknown field ${show(unknown)}; a parameter has key, type, value, enumOptions`,
      );
    if (entry.key !== undefined && entry.name !== undefined && entry.key !== entry.name)
      throw badRequest(`${where}: "key" and "name" differ; give one of them`);
    const key = checkKey(entry.key ?? entry.name, where);
    const type = checkType(entry.type, where);
    const enumOptions = type === 'enum' ? checkEnumOptions(entry.enumOptions, where) : undefined;
    if (entry.value === undefined) throw badRequest(`${where}: parameter "${key}" needs a default "value"`);
    const declared = { key, type, ...(enumOptions && enumOptions.length > 0 ? { enumOptions } : {}) };
    return { ...declared, value: checkValue(declared, entry.value, field) };
  });
  return unique(parameters, field);
}

/**
 * The map form (the TypeScript client): `{name: value}`. Types are not sent: a parameter the
 * query already declares keeps its type and options and takes the value as its default; a
 * new one is text.
 */
export function parseParameterMap(
  map: unknown,
  field: string,
  declared: readonly QueryParameter[] = [],
): QueryParameter[] {
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw badRequest(`field "${field}" must be an object {name: value}`);
  const entries = Object.entries(map as Record<string, unknown>);
  if (entries.length > MAX_PARAMETERS)
    throw badRequest(`field "${field}" holds more than ${MAX_PARAMETERS} parameters`);
  return entries.map(([key, value]) => {
    checkKey(key, field);
    const existing = declared.find((p) => p.key === key);
    const shape = existing ? { ...existing } : { key, type: 'text' as const };
    return { ...shape, value: checkValue(shape, value, field) };
  });
}

function unique(parameters: QueryParameter[], field: string): QueryParameter[] {
  const seen = new Set<string>();
  for (const { key } of parameters) {
    if (seen.has(key)) throw badRequest(`field "${field}" declares parameter "${key}" twice`);
    seen.add(key);
  }
  return parameters;
}

/** The names of the `{{name}}` placeholders in the SQL, in order of first appearance. */
export function placeholders(sql: string): string[] {
  const names = new Set<string>();
  for (const match of sql.matchAll(PLACEHOLDER)) names.add(match[1] as string);
  return [...names];
}

/** Every `{{name}}` must be a declared parameter. */
export function checkPlaceholders(sql: string, parameters: readonly QueryParameter[], where: string): void {
  const missing = placeholders(sql).filter((name) => !parameters.some((p) => p.key === name));
  if (missing.length > 0)
    throw badRequest(
      `${where}: the SQL uses ${missing.map((n) => `{{${n}}}`).join(', ')} but the query declares no parameter of that name` +
        ' (declare it in "parameters" with a type and a default value)',
    );
}

/**
 * The values a run uses: each declared parameter's given value (checked) or its default.
 * A name that is not declared is a 400 naming it.
 */
export function resolveValues(
  parameters: readonly QueryParameter[],
  given: ReadonlyMap<string, unknown>,
  where: string,
): Map<string, string> {
  for (const name of given.keys()) {
    if (!parameters.some((p) => p.key === name))
      throw badRequest(
        `${where}: unknown parameter "${name.slice(0, 100)}"; ${
          parameters.length === 0
            ? 'this query takes no parameters'
            : `this query takes ${parameters.map((p) => `"${p.key}"`).join(', ')}`
        }`,
      );
  }
  const values = new Map<string, string>();
  for (const parameter of parameters) {
    const value = given.get(parameter.key);
    values.set(parameter.key, value === undefined ? parameter.value : checkValue(parameter, value, where));
  }
  return values;
}

/** A parameter set as one comparable string: `[[name, value], …]` sorted by name. */
export function parameterSet(values: ReadonlyMap<string, string>): string {
  return JSON.stringify([...values.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The SQL with each `{{name}}` replaced by its value's text, in one pass (a value that
 * itself holds `{{x}}` stays as it is). In text and enum values every `'` is doubled, so
 * that a value cannot end the string literal the SQL puts it in.
 */
export function substitute(
  sql: string,
  parameters: readonly QueryParameter[],
  values: ReadonlyMap<string, string>,
): string {
  return sql.replace(PLACEHOLDER, (whole, name: string) => {
    const parameter = parameters.find((p) => p.key === name);
    const value = values.get(name);
    if (!parameter || value === undefined) return whole;
    return parameter.type === 'text' || parameter.type === 'enum' ? value.replaceAll("'", "''") : value;
  });
}

/**
 * A parameter as the query object shows it: `{key, type, value, enumOptions?}` as the
 * mirrored API (and the Python client) has it, and `name` too, which is what the TypeScript
 * client's QueryParameter calls the key: a query read with it can be sent back as it is.
 */
export function parameterToApi(parameter: QueryParameter): Record<string, unknown> {
  return {
    key: parameter.key,
    name: parameter.key,
    type: parameter.type,
    value: parameter.value,
    ...(parameter.enumOptions ? { enumOptions: parameter.enumOptions } : {}),
  };
}
