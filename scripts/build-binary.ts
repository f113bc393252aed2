/**
 * Builds the single executable file for Linux x64: `npm run build:binary [-- --out DIR]`.
 * The last line of output is the file's path.
 *
 * How: a Node.js single executable application (SEA). esbuild bundles the service into one
 * CommonJS file (SEA runs CommonJS only, and its `require` sees built-in modules only); the
 * bundle, the project files (`queries/`), the web pages' bundled
 * files and DuckDB's native library become SEA assets; the blob is injected with postject
 * into a copy of the Node binary running this script. Nothing is downloaded: it uses only what `npm ci` installed and the
 * Node that runs it. See the README's "Run as a single file" for why this approach.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { PROJECT_FOLDERS, projectFiles, sourceRoot } from '../src/packaging/project-files.js';
import {
  type EmbeddedFile,
  type EmbeddedManifest,
  MANIFEST_ASSET,
} from '../src/packaging/single-executable.js';
import { bundleWebPages } from '../src/packaging/web-assets.js';
import { bundleCli, bundleSandboxWorker } from './bundle-cli.js';

const BINARY_NAME = 'restaking-data-service';
/** Node's SEA fuse; a Node binary without it cannot become a single executable. */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const root = sourceRoot();
const require = createRequire(import.meta.url);
const started = performance.now();

function fail(message: string): never {
  process.stderr.write(`build:binary: ${message}\n`);
  process.exit(1);
}

function step(message: string): void {
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`);
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.error) fail(`${path.basename(command)} ${args[0] ?? ''}: ${result.error.message}`);
  if (result.status !== 0) fail(`${path.basename(command)} ${args.join(' ')} failed:\n${output}`);
  return output;
}

function checkPreconditions(): void {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`builds for Linux x64 only, this is ${process.platform}-${process.arch}`);
  }
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 12)) {
    fail(`needs Node.js 20.12 or newer (the sea assets API), this is ${process.versions.node}`);
  }
  // Some distributions build Node without SEA support; say so rather than let postject fail.
  if (!fs.readFileSync(process.execPath).includes(SEA_FUSE)) {
    fail(`${process.execPath} was built without single-executable support; use an official Node.js build`);
  }
}

/**
 * Adds a file to the SEA assets, compressed when that saves much. Brotli at quality 2: for
 * the DuckDB library (70.5 MB) it gives 22.4 MB in 0.5 s of CPU, where gzip -6 gave 23.8 MB
 * in 1.9 s and gzip -1 26.1 MB in 0.6 s; unpacking takes the same 0.25 s on a first start
 * (measured on this 2-core machine with node:zlib).
 */
function addAsset(
  assets: Record<string, string>,
  workDir: string,
  key: string,
  contents: Buffer,
  compress: boolean,
): EmbeddedFile {
  const file = path.join(workDir, 'assets', `${Object.keys(assets).length}`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const packed = compress
    ? zlib.brotliCompressSync(contents, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 2,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: contents.length,
        },
      })
    : contents;
  fs.writeFileSync(file, packed);
  assets[key] = file;
  return { asset: key, size: contents.length, compressed: compress };
}

function duckdbPackageDir(): string {
  const bindings = path.dirname(require.resolve('@duckdb/node-bindings/package.json'));
  const requireFromBindings = createRequire(path.join(bindings, 'package.json'));
  return path.dirname(requireFromBindings.resolve('@duckdb/node-bindings-linux-x64/package.json'));
}

async function collectAssets(
  workDir: string,
): Promise<{ assets: Record<string, string>; manifest: EmbeddedManifest }> {
  const assets: Record<string, string> = {};
  const workerFile = path.join(workDir, 'sandbox-worker.cjs');
  await bundleSandboxWorker(workerFile);
  const sandboxWorker = addAsset(assets, workDir, 'sandbox-worker.cjs', fs.readFileSync(workerFile), false);
  const version = (
    JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const projectFolders: EmbeddedManifest['projectFiles'] = {};
  for (const folder of PROJECT_FOLDERS) {
    const entries: Record<string, EmbeddedFile> = {};
    for (const file of projectFiles(folder)) {
      entries[file.name] = addAsset(assets, workDir, `project/${folder}/${file.name}`, file.contents, false);
    }
    projectFolders[folder] = entries;
  }
  const webAssets: Record<string, EmbeddedFile> = {};
  for (const file of await bundleWebPages()) {
    webAssets[file.name] = addAsset(assets, workDir, `web/${file.name}`, file.contents, false);
  }
  // The addon and the shared library it links against ($ORIGIN), nothing else of the package.
  const nativeDir = duckdbPackageDir();
  const hash = createHash('sha256');
  const nativeFiles: Record<string, EmbeddedFile> = {};
  for (const name of fs.readdirSync(nativeDir).sort()) {
    if (!name.endsWith('.node') && !name.endsWith('.so')) continue;
    const contents = fs.readFileSync(path.join(nativeDir, name));
    hash.update(name).update(contents);
    nativeFiles[name] = addAsset(assets, workDir, `duckdb/${name}`, contents, true);
  }
  if (!nativeFiles['duckdb.node']) fail(`no duckdb.node in ${nativeDir}`);
  const manifest: EmbeddedManifest = {
    version,
    projectFiles: projectFolders,
    webAssets,
    sandboxWorker,
    duckdb: { hash: hash.digest('hex').slice(0, 16), addon: 'duckdb.node', files: nativeFiles },
  };
  const manifestFile = path.join(workDir, MANIFEST_ASSET);
  fs.writeFileSync(manifestFile, JSON.stringify(manifest));
  assets[MANIFEST_ASSET] = manifestFile;
  return { assets, manifest };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const outDir = path.resolve(values.out ?? path.join(root, 'dist'));
  checkPreconditions();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-binary-'));
  try {
    const bundleFile = path.join(workDir, 'service.cjs');
    await bundleCli(bundleFile, 'embedded');
    step(`bundled the service (${(fs.statSync(bundleFile).size / 1e6).toFixed(1)} MB of JavaScript)`);

    const { assets, manifest } = await collectAssets(workDir);
    step(
      `collected ${Object.keys(assets).length} assets (DuckDB ${Object.keys(manifest.duckdb.files).join(', ')})`,
    );

    const seaConfig = path.join(workDir, 'sea-config.json');
    const blob = path.join(workDir, 'sea-prep.blob');
    fs.writeFileSync(
      seaConfig,
      JSON.stringify(
        { main: bundleFile, output: blob, disableExperimentalSEAWarning: true, assets },
        null,
        2,
      ),
    );
    run(process.execPath, ['--experimental-sea-config', seaConfig], workDir);
    step(`prepared the SEA blob (${(fs.statSync(blob).size / 1e6).toFixed(1)} MB)`);

    const executable = path.join(workDir, BINARY_NAME);
    fs.copyFileSync(process.execPath, executable);
    fs.chmodSync(executable, 0o755);
    const postject = require.resolve('postject/dist/cli.js');
    run(
      process.execPath,
      [postject, executable, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE],
      workDir,
    );
    step(`injected it into a copy of ${process.execPath} (Node.js ${process.version})`);

    // A bundling mistake (a module left out, a native file not found) shows at start-up.
    const version = run(executable, ['--version'], workDir).trim();
    if (version !== manifest.version) fail(`the built file answered --version with "${version}"`);
    step(`checked: it starts and reports version ${version}`);

    fs.mkdirSync(outDir, { recursive: true });
    const target = path.join(outDir, BINARY_NAME);
    const staging = path.join(outDir, `.${BINARY_NAME}.${process.pid}.tmp`);
    fs.copyFileSync(executable, staging);
    fs.chmodSync(staging, 0o755);
    // Renamed into place, so a copy of the previous build that is running keeps working.
    fs.renameSync(staging, target);
    step(`wrote ${(fs.statSync(target).size / 1e6).toFixed(1)} MB`);
    process.stdout.write(`${target}\n`);
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
