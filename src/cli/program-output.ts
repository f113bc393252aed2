/**
 * Where the command line writes help, refusals and what a command prints for its caller:
 * the process's streams, or a test's buffers when the program runs in-process.
 */
export interface ProgramOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

export const STANDARD_STREAMS: ProgramOutput = {
  writeOut: (text) => process.stdout.write(text),
  writeErr: (text) => process.stderr.write(text),
};
