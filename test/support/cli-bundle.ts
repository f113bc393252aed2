import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleCli } from '../../scripts/bundle-cli.js';

/**
 * Global setup of the process tests (vitest.config.ts): bundles the command line once per
 * run, so each child process starts in a fraction of what `node --import tsx` costs
 * (scripts/bundle-cli.ts has the figures). child-service.ts starts it; the directory is
 * readable by every user because a fault test runs the server as `nobody`.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The bundled command line (`node <file> serve …`), built from this checkout. */
    cliBundle: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, '../..');

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-bundle-'));
  fs.chmodSync(dir, 0o755);
  // The bundle imports the installed packages (DuckDB's native addon among them) from beside itself.
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const bundle = path.join(dir, 'restaking-data-service.mjs');
  await bundleCli(bundle, 'source tree');
  project.provide('cliBundle', bundle);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
