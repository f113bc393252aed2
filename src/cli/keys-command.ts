import type { Command } from 'commander';
import { KeyStore, validateHandle } from '../auth/key-store.js';
import { loadConfig } from '../config/config.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';
import { CliError, EXIT } from './exit-codes.js';
import type { ProgramOutput } from './program-output.js';

/**
 * `keys create`: the durable way to add a key (DESIGN §2). Only the key's hash is stored;
 * the key itself goes to stdout alone, so `KEY=$(… keys create --handle x)` captures it.
 * Safe while a server runs: the key file is replaced in one rename and the server re-reads it.
 */

interface CreateOptions {
  handle: string;
  premium?: boolean;
  admin?: boolean;
  dataDir?: string;
}

function createKey(options: CreateOptions, output: ProgramOutput): void {
  const problem = validateHandle(options.handle);
  if (problem) throw new CliError(problem, EXIT.usage);
  const config = loadConfig(environmentWithFlags({ ...options }));
  const plan = options.premium ? 'premium' : 'free';
  const key = KeyStore.createKey(config.dataDir, {
    handle: options.handle,
    plan,
    admin: options.admin === true,
  });
  output.writeOut(`${key}\n`);
  output.writeErr(
    `Created a ${plan}${options.admin ? ' admin' : ''} key for "${options.handle}" in ${config.dataDir}. It is shown only now; a running server accepts it at once.\n`,
  );
}

export function addKeysCommand(program: Command, output: ProgramOutput): void {
  const keys = program.command('keys').description('manage API keys (see keys create --help)');
  addConfigFlags(
    keys
      .command('create')
      .description('create an API key and print it once (only its hash is stored)')
      .requiredOption('--handle <name>', 'account handle, also its namespace')
      .option('--premium', 'premium plan (private tables, higher rate limits)')
      .option('--admin', 'may write and read every namespace'),
    ['DATA_DIR'],
  ).action((options: CreateOptions) => createKey(options, output));
}
