import { runProgram } from './program.js';

/**
 * The command line's entry point, the same from `npm start -- …` and from the single-file
 * build: runs the program (program.ts) and ends the process with the code it ended with.
 * A command that finished its work exits when nothing is left to do; `serve` keeps serving.
 */
export async function main(argv: readonly string[] = process.argv): Promise<void> {
  const code = await runProgram(argv);
  if (code !== undefined) process.exit(code);
}

// No top-level await: the single-file build bundles this module as CommonJS.
void main();
