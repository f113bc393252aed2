import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { ConfigError } from '../config/config.js';
import { QueryFileError } from '../queries/query-files.js';
import { DatabaseLockedError } from '../storage/database.js';
import { addDemoCommand } from './demo-command.js';
import { CliError, EXIT } from './exit-codes.js';
import { addKeysCommand } from './keys-command.js';
import { addRefreshCommand } from './refresh-command.js';
import { addServeCommand } from './serve-command.js';

/**
 * The command line, the same from `npm start -- …` and from the single-file build. Every
 * way it can end maps to one exit code of exit-codes.ts, by the type of what was thrown.
 */

const MORE_HELP = `
Every flag overrides the environment variable named in its description; the variables
and their defaults are in the README's configuration section.

Exit codes:
  ${EXIT.ok}  done (serve: stopped cleanly on SIGTERM or SIGINT)
  ${EXIT.failure}  failed while running (a saved query failed, a directory is not writable, …)
  ${EXIT.usage}  usage or configuration error (unknown command or flag, bad value); nothing changed
  ${EXIT.databaseInUse}  the database file is held by another process (a running server)`;

export function buildProgram(): Command {
  const program = new Command('restaking-data-service')
    .description('Table uploads and restaking metrics over HTTP, DuckDB inside')
    .version(packageJson.version, '-V, --version', 'print the version and exit')
    .addHelpText('after', MORE_HELP)
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError()
    .exitOverride();
  addServeCommand(program);
  addKeysCommand(program);
  addDemoCommand(program);
  addRefreshCommand(program);
  return program;
}

function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ConfigError || error instanceof QueryFileError) return EXIT.usage;
  if (error instanceof DatabaseLockedError) return EXIT.databaseInUse;
  return EXIT.failure;
}

export async function main(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync([...argv]);
  } catch (error) {
    const code = exitCodeOf(error);
    // Commander has already printed its own message (and help) for its errors.
    if (!(error instanceof CommanderError)) {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    process.exit(code);
  }
}

// No top-level await: the single-file build bundles this module as CommonJS.
void main();
