import { badRequest } from '../errors.js';

/** As given by the client, before an upload's `dataset_` prefix. */
const TABLE_NAME = /^[a-z][a-z0-9_]*$/;
export const MAX_TABLE_NAME_LENGTH = 128;

export function validateTableName(name: unknown, field = 'table_name'): string {
  if (typeof name !== 'string') throw badRequest(`field "${field}" must be a string`);
  if (name.length === 0) throw badRequest(`field "${field}" must not be empty`);
  if (name.length > MAX_TABLE_NAME_LENGTH) {
    throw badRequest(
      `field "${field}" must be at most ${MAX_TABLE_NAME_LENGTH} characters, got ${name.length}`,
    );
  }
  if (!TABLE_NAME.test(name)) {
    throw badRequest(
      `field "${field}" must start with a lowercase letter and hold only lowercase letters, digits and _; got ${JSON.stringify(name)}`,
    );
  }
  return name;
}

/** Where an upload of `name` is stored. */
export function uploadedTableName(name: string): string {
  return `dataset_${name}`;
}
