import { Command, CommanderError } from 'commander';
import { KeyStore } from '../auth/key-store.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { createLogger } from '../log.js';
import { startService } from '../service.js';
import { DatabaseLockedError } from '../storage/database.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';
import { addDemoCommand } from './demo-command.js';

/**
 * The command line. Exit codes: 0 success, 1 a failure while running, 2 a usage or
 * configuration error (unknown flag, bad value).
 */

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

function fail(message: string, code: number): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

async function serve(options: Record<string, unknown>): Promise<void> {
  const config = loadConfig(environmentWithFlags(options));
  const logger = createLogger(config.logLevel);
  const service = await startService(config, logger);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`Serving on ${service.url} (data directory ${config.dataDir})`);
  if (service.localKey) {
    out(
      service.localKey.created
        ? `Created a local API key (handle "local", premium, admin): ${service.localKey.key}`
        : `Local API key: ${service.localKey.key}`,
    );
    out(
      `  it is saved in ${config.dataDir}/dev-api-key.txt; try: curl -H "X-Service-Api-Key: ${service.localKey.key}" ${service.url}/v1/tables`,
    );
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => {
        logger.info('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(EXIT_FAILURE);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function createKey(options: { handle: string; premium?: boolean; admin?: boolean; dataDir?: string }): void {
  const config = loadConfig(environmentWithFlags(options));
  const key = KeyStore.createKey(config.dataDir, {
    handle: options.handle,
    plan: options.premium ? 'premium' : 'free',
    admin: options.admin === true,
  });
  process.stdout.write(`${key}\n`);
  process.stderr.write(
    `Created a ${options.premium ? 'premium' : 'free'}${options.admin ? ' admin' : ''} key for "${options.handle}". It is shown only now; a running server accepts it at once.\n`,
  );
}

export function buildProgram(): Command {
  const program = new Command('restaking-data-service')
    .description('Table uploads and restaking metrics over HTTP, DuckDB inside')
    .version(process.env.npm_package_version ?? '0.1.0')
    .showHelpAfterError()
    .exitOverride();

  addConfigFlags(
    program.command('serve', { isDefault: true }).description('start the HTTP service (default)'),
  ).action(serve);

  const keys = program.command('keys').description('manage API keys');
  addConfigFlags(
    keys
      .command('create')
      .description('create an API key; prints it once (only its hash is stored)')
      .requiredOption('--handle <name>', 'account handle, also its namespace')
      .option('--premium', 'premium plan (private tables, higher rate limits)')
      .option('--admin', 'may write and read every namespace'),
    ['DATA_DIR'],
  ).action(createKey);

  addDemoCommand(program);
  return program;
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    if (error instanceof ConfigError) fail(error.message, EXIT_USAGE);
    if (error instanceof DatabaseLockedError) fail(error.message, EXIT_FAILURE);
    fail(error instanceof Error ? error.message : String(error), EXIT_FAILURE);
  }
}

await main();
