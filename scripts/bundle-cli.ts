/**
 * The command line bundled by esbuild into one CommonJS file: what the single executable
 * runs (scripts/build-binary.ts) and what the process tests start (test/support/cli-bundle.ts),
 * so both run the same bundle of the same source. Measured on this machine: the bundle
 * starts `--version` in about 0.15 s of CPU, `node --import tsx src/cli/main.ts` in 0.8 s.
 */
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { sourceRoot } from '../src/packaging/project-files.js';

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

/**
 * `embedded`: DuckDB's library and the project files come from the single executable.
 * `source tree`: the bundle `require`s the installed @duckdb/node-bindings (a `node_modules`
 * beside or above the bundle must hold it) and reads the project files from this checkout.
 */
export type BundleKind = 'embedded' | 'source tree';

export async function bundleCli(outfile: string, kind: BundleKind): Promise<void> {
  const result = await build({
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    ...(kind === 'embedded'
      ? {
          plugins: [embeddedDuckDB],
          // The only import.meta use is the source-tree root, never reached in the executable.
          define: { 'import.meta.dirname': 'undefined' },
        }
      : {
          external: ['@duckdb/node-bindings'],
          define: { 'import.meta.dirname': JSON.stringify(path.join(root, 'src/packaging')) },
        }),
    legalComments: 'none',
    logLevel: 'silent',
  });
  for (const warning of result.warnings) {
    process.stderr.write(`esbuild: ${warning.text} (${warning.location?.file}:${warning.location?.line})\n`);
  }
}
