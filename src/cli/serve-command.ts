import path from 'node:path';
import type { Command } from 'commander';
import { KEY_FILE_NAME } from '../auth/key-store.js';
import type { Config } from '../config/config.js';
import { loadConfig } from '../config/config.js';
import { createLogger, type Logger } from '../log.js';
import { webAssets } from '../packaging/web-assets.js';
import { type RunningService, startService } from '../service.js';
import { addConfigFlags, environmentWithFlags } from './config-flags.js';
import { CliError, EXIT } from './exit-codes.js';
import type { ProgramOutput } from './program-output.js';

/**
 * `serve`, the default command: starts the service, prints one start-up line, and stops
 * cleanly on SIGTERM or SIGINT (exit 0). Shutdown is bounded: if closing takes longer than
 * SHUTDOWN_DEADLINE_MS, or a second signal comes, the process exits with 1 at once. DuckDB's
 * write-ahead log keeps the file consistent either way; only uncommitted work is lost.
 * process.exit waits for the threads running DuckDB statements, so whatever still runs is
 * interrupted first; closing never blocks the event loop, so the deadline always fires.
 */

const SHUTDOWN_DEADLINE_MS = 10_000;
/** How long exiting early waits for SQL checks still running (each takes a second at most). */
const EXIT_CHECKS_GRACE_MS = 2_000;

function describeKeys(config: Config, service: RunningService): string {
  const configured = config.apiKeys.length;
  const inFile = Math.max(0, service.keys.size - configured);
  const sources: string[] = [];
  if (configured > 0) sources.push(`${configured} from API_KEYS`);
  if (inFile > 0) sources.push(`${inFile} in ${path.join(config.dataDir, KEY_FILE_NAME)}`);
  return sources.length > 0 ? `keys: ${sources.join(', ')}` : 'keys: none';
}

function describeQueries(service: RunningService): string {
  const queries = service.queryFiles;
  if (queries.length === 0) return 'saved queries: none';
  return `saved queries: ${queries.map((q) => `${q.id} (${q.name})`).join(', ')}`;
}

/** The address cannot be listened on: said in words, with how to choose another, and its own exit code. */
function listenRefusal(error: unknown, config: Config): CliError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${config.port} on ${config.host}`;
  const choose = `choose another with --port 9000 or PORT=9000 (0 takes any free port)`;
  if (code === 'EADDRINUSE')
    return new CliError(
      `${where} is already in use by another program (another server?); ${choose}`,
      EXIT.portUnavailable,
    );
  if (code === 'EACCES')
    return new CliError(
      `${where} needs privileges this user does not have (ports below 1024); ${choose}`,
      EXIT.portUnavailable,
    );
  if (code === 'EADDRNOTAVAIL')
    return new CliError(
      `${config.host} is not an address of this machine; choose another with --host or HOST (127.0.0.1, or 0.0.0.0 for every address)`,
      EXIT.portUnavailable,
    );
  return undefined;
}

/**
 * Stops the service on SIGTERM or SIGINT: cleanly within SHUTDOWN_DEADLINE_MS (exit 0), or at
 * once with 1 past it or at a second signal.
 */
function stopOnSignals(service: RunningService, logger: Logger): void {
  let stopping = false;
  const exitNow = () => {
    service.database.interruptAll();
    // A check worker stopped during one of its DuckDB calls aborts the process (exit code
    // 134): the checks running get a moment to end (SqlChecker).
    void service.sqlChecker.close(EXIT_CHECKS_GRACE_MS).finally(() => process.exit(EXIT.failure));
  };
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting for the shutdown');
      exitNow();
      return;
    }
    stopping = true;
    const started = performance.now();
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ ms: SHUTDOWN_DEADLINE_MS }, 'shutdown took too long; exiting');
      exitNow();
    }, SHUTDOWN_DEADLINE_MS).unref();
    service.close().then(
      () => {
        logger.info({ ms: Math.round(performance.now() - started) }, 'stopped cleanly');
        process.exit(EXIT.ok);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(EXIT.failure);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** The start-up lines: where it serves, and the local key last. */
function printStart(config: Config, service: RunningService, logger: Logger, output: ProgramOutput): void {
  const out = (line: string) => output.writeOut(`${line}\n`);
  const keys = describeKeys(config, service);
  const queries = describeQueries(service);
  out(`Serving on ${service.url} (data directory ${config.dataDir}; ${keys}; ${queries})`);
  logger.info(
    {
      url: service.url,
      dataDir: config.dataDir,
      configuredKeys: config.apiKeys.length,
      keys: service.keys.size,
      savedQueries: service.queryFiles.map((q) => q.id),
    },
    'serving',
  );
  out(`Workspace: ${service.url}/`);
  if (service.pg) {
    const host = service.pg.host.includes(':') ? `[${service.pg.host}]` : service.pg.host;
    out(
      `Postgres wire protocol: ${host}:${service.pg.port} (psql -h ${service.pg.host} -p ${service.pg.port}; password: an API key)`,
    );
  }
  // The key last, alone on its line: what a newcomer copies, and what `tail -1` gives a script.
  if (service.localKey) {
    const file = path.join(config.dataDir, 'dev-api-key.txt');
    out(
      service.localKey.created
        ? `Created a local API key (handle "local", premium, admin), saved in ${file}; send it in the X-Service-Api-Key header:`
        : `The local API key (handle "local", premium, admin), from ${file}; send it in the X-Service-Api-Key header:`,
    );
    out(`  curl -H "X-Service-Api-Key: $(cat ${file})" ${service.url}/v1/tables`);
    out(service.localKey.key);
  }
}

/** What the first requests would otherwise wait for, started in the background. */
function warmUp(service: RunningService, logger: Logger): void {
  // The first SQL is then not checked by a starting worker.
  service.sqlChecker.warm();
  // Bundled now, so that the first visit finds the pages ready.
  const bundling = performance.now();
  webAssets().then(
    (assets) =>
      logger.debug({ ms: Math.round(performance.now() - bundling), files: assets.length }, 'web pages ready'),
    (error: unknown) => logger.error({ err: error }, 'the web pages could not be bundled'),
  );
}

async function serve(
  options: Record<string, unknown>,
  command: Command,
  output: ProgramOutput,
): Promise<void> {
  // `serve` is the default command, so a mistyped command name arrives here as an operand.
  if (command.args.length > 0) {
    throw new CliError(
      `unknown command '${command.args[0]}' (commands: serve, keys create, demo, refresh, upload; see --help)`,
      EXIT.usage,
    );
  }
  const config = loadConfig(environmentWithFlags(options));
  const logger = createLogger(config.logLevel);
  const service = await startService(config, logger).catch((error: unknown) => {
    throw listenRefusal(error, config) ?? error;
  });
  // Before the start-up line: whoever waits for that line may signal at once.
  stopOnSignals(service, logger);
  printStart(config, service, logger, output);
  warmUp(service, logger);
}

export function addServeCommand(program: Command, output: ProgramOutput): void {
  addConfigFlags(
    program
      .command('serve', { isDefault: true })
      .description('start the HTTP service (the default command)')
      // Checked in the action, for a clearer message than "too many arguments".
      .allowExcessArguments(true),
  ).action((options: Record<string, unknown>, command: Command) => serve(options, command, output));
}
