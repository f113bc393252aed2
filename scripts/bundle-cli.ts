/**
 * The command line bundled by esbuild into one file, in two kinds:
 *
 * - `embedded`, what the single executable runs (scripts/build-binary.ts): CommonJS (SEA runs
 *   CommonJS only, and its `require` sees built-in modules only), every package inside, DuckDB's
 *   library and the project files taken from the executable.
 * - `source tree`, what the process tests start (test/support/cli-bundle.ts): the source
 *   transpiled into one ES module beside a `node_modules` that holds the installed packages,
 *   which it imports as `npm start` does; each source file sees its own `import.meta` paths.
 *   Measured on this machine: `--version` costs about 0.3 s of CPU this way, 0.9 s through
 *   `node --import tsx src/cli/main.ts` (a fully bundled CommonJS file: 0.18 s, but it would
 *   bundle packages the way only the executable has to).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { sourceRoot } from '../src/packaging/project-files.js';
import { THREAD_POOL_BANNER } from '../src/workload/thread-pool.js';

const root = sourceRoot();

/**
 * @duckdb/node-bindings picks a platform package and `require`s its `.node` file, which
 * cannot work from inside the executable: the bundle gets the embedded loader instead.
 */
const embeddedDuckDB: Plugin = {
  name: 'embedded-duckdb',
  setup(builder) {
    builder.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({
      path: 'binding',
      namespace: 'embedded-duckdb',
    }));
    builder.onLoad({ filter: /.*/, namespace: 'embedded-duckdb' }, () => ({
      contents: `module.exports = require(${JSON.stringify(path.join(root, 'src/packaging/embedded-duckdb.ts'))}).loadEmbeddedDuckDB();`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

/** `import.meta.dirname` and `filename` as each source file has them, not the bundle's. */
const sourcePaths: Plugin = {
  name: 'source-paths',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, async (args) => ({
      contents: (await fs.promises.readFile(args.path, 'utf8'))
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path)),
      loader: 'ts',
    }));
  },
};

export type BundleKind = 'embedded' | 'source tree';

/**
 * The sandbox's check worker (src/queries/sandbox/check-worker.ts) for the single executable:
 * a worker thread there runs code given as a string (`eval`), CommonJS with every package
 * inside and DuckDB's addon from the embedded loader, as the main bundle has it.
 */
export async function bundleSandboxWorker(outfile: string): Promise<void> {
  await build({
    entryPoints: [path.join(root, 'src/queries/sandbox/check-worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    plugins: [embeddedDuckDB],
    define: { 'import.meta.dirname': 'undefined', 'import.meta.filename': 'undefined' },
    legalComments: 'none',
    logLevel: 'silent',
  });
}

export async function bundleCli(outfile: string, kind: BundleKind): Promise<void> {
  const result = await build({
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    ...(kind === 'embedded'
      ? {
          format: 'cjs',
          plugins: [embeddedDuckDB],
          // Before anything runs: libuv sizes its pool on first use (src/workload/thread-pool.ts).
          banner: { js: THREAD_POOL_BANNER },
          // Only the source tree bundles the workspace page at run time; the executable embeds it.
          external: ['esbuild'],
          // import.meta is used only to find the source tree (its root, the page's bundle cache),
          // never reached in the executable.
          define: { 'import.meta.dirname': 'undefined', 'import.meta.filename': 'undefined' },
        }
      : { format: 'esm', packages: 'external', plugins: [sourcePaths] }),
    legalComments: 'none',
    logLevel: 'silent',
  });
  for (const warning of result.warnings) {
    process.stderr.write(`esbuild: ${warning.text} (${warning.location?.file}:${warning.location?.line})\n`);
  }
}
