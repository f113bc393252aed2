import { Command, CommanderError } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { ConfigError } from '../config/config.js';
import { QueryFileError } from '../queries/query-files.js';
import { DatabaseLockedError } from '../storage/database.js';
import { addCompactCommand } from './compact-command.js';
import { addDemoCommand } from './demo-command.js';
import { CliError, EXIT } from './exit-codes.js';
import { addKeysCommand } from './keys-command.js';
import { type ProgramOutput, STANDARD_STREAMS } from './program-output.js';
import { addRefreshCommand } from './refresh-command.js';
import { addServeCommand } from './serve-command.js';
import { addUploadCommand } from './upload-command.js';

/**
 * The command line as a value: main.ts runs it for the process, tests run it in-process
 * with the output captured. Every way it can end maps to one exit code of exit-codes.ts,
 * by the type of what was thrown.
 */

const MORE_HELP = `
Every flag overrides the environment variable named in its description; the variables
and their defaults are in the README's configuration section.

Exit codes:
  ${EXIT.ok}  done (serve: stopped cleanly on SIGTERM or SIGINT)
  ${EXIT.failure}  failed while running (a saved query failed, a directory is not writable, …)
  ${EXIT.usage}  usage or configuration error (unknown command or flag, bad value); nothing changed
  ${EXIT.databaseInUse}  the database file is held by another process (a running server)
  ${EXIT.portUnavailable}  serve: the port is taken by another program (or needs privileges); choose one with --port or PORT`;

export function buildProgram(output: ProgramOutput = STANDARD_STREAMS): Command {
  // Output and exit override first: subcommands copy both when they are added.
  const program = new Command('restaking-data-service')
    .configureOutput(output)
    .exitOverride()
    .description('Table uploads and restaking metrics over HTTP, DuckDB inside')
    .version(packageJson.version, '-V, --version', 'print the version and exit')
    .addHelpText('after', MORE_HELP)
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError();
  addServeCommand(program, output);
  addKeysCommand(program, output);
  addDemoCommand(program, output);
  addRefreshCommand(program, output);
  addCompactCommand(program, output);
  addUploadCommand(program, output);
  return program;
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ConfigError || error instanceof QueryFileError) return EXIT.usage;
  if (error instanceof DatabaseLockedError) return EXIT.databaseInUse;
  return EXIT.failure;
}

/**
 * Runs one command line (`argv` as process.argv: node and script first). Resolves with the
 * exit code when it ended early (help, a refusal, a failure, a command that stops with a
 * code), or undefined when the command did its work: `serve` is then serving still.
 */
export async function runProgram(
  argv: readonly string[],
  output: ProgramOutput = STANDARD_STREAMS,
): Promise<number | undefined> {
  try {
    await buildProgram(output).parseAsync([...argv]);
    return undefined;
  } catch (error) {
    // Commander has already written its own message (and help) for its errors.
    if (!(error instanceof CommanderError)) {
      output.writeErr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    return exitCodeOf(error);
  }
}
