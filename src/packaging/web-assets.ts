import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { BuildOptions, BuildResult } from 'esbuild';
import { sourceRoot } from './project-files.js';
import { embeddedManifest, isSingleExecutable, readEmbedded } from './single-executable.js';

/**
 * The service's web pages, built from `web/`: the workspace at `/` (`web/workspace/`) and the
 * data settings page at `/settings/data` (`web/settings/`), two entries of one esbuild bundle
 * that share what both use (`web/shared/`: the API client, signing in, formatting) as a file
 * of its own. The libraries the workspace imports from npm (CodeMirror, Observable Plot) are
 * bundled too, so that nothing a page loads comes from anywhere but this server.
 *
 * When: on demand (`serve` asks right after listening, in the background), once per process,
 * in memory: no step a person runs, no build output in the repository. A bundle takes
 * 0.5–0.9 s of one core here, so the result is also kept in `node_modules/.cache/` under a
 * digest of every file that went into it (and of this file): later starts read it back in
 * ~20 ms, and any change to a source, a library or these build options makes a new bundle.
 * The single-file build runs the same bundling at build time and embeds the result (esbuild
 * cannot run inside that file). Measured 2026-11-22, load average 3.
 */

export const WEB_SOURCES = 'web';

export interface WebAsset {
  /** A page (`index.html`, `settings.html`), or a file name with a hash of its contents, e.g. `workspace-EOJCXUHR.js`. */
  name: string;
  contents: Buffer;
}

/** An asset with its compressed forms, made once: the page is sent many times, compressed once. */
export interface ServedAsset extends WebAsset {
  gzip: Buffer;
  brotli: Buffer;
}

/** Pages are served at their own paths, never as files under /assets. */
export const isPage = (name: string) => name.endsWith('.html');

interface PageSource {
  /** Its name in the bundle, which its route asks for. */
  name: string;
  /** Its HTML, under web/. */
  html: string;
  /** What the HTML refers to → the source (under web/) whose output replaces the reference. */
  entries: Record<string, string>;
}

const PAGES: PageSource[] = [
  {
    name: 'index.html',
    html: 'workspace/index.html',
    entries: {
      '/assets/workspace.js': 'workspace/workspace.ts',
      '/assets/workspace.css': 'workspace/workspace.css',
    },
  },
  {
    name: 'settings.html',
    html: 'settings/index.html',
    entries: {
      '/assets/settings.js': 'settings/settings.ts',
      '/assets/settings.css': 'settings/settings.css',
    },
  },
];

/**
 * Loaded with import() when first needed (the chart library, 40% of the workspace's script):
 * named as entries, so that their files say what they are (`chart-library-….js`) rather than
 * `chunk-….js`, the files the pages share.
 */
const LAZY_ENTRIES = ['workspace/chart-library.ts'];

/** Files of web/ served as they are (under a hashed name), by their reference in a page. */
const STATIC_FILES: Record<string, string> = { '/assets/favicon.svg': 'workspace/favicon.svg' };

/** The notices of the bundled packages, by its reference in a page. */
const LICENSES = '/assets/licenses.txt';

interface PackageInfo {
  name: string;
  version: string;
  license: string;
  notice: string;
}

/** The package a bundled file comes from, with its licence text (for the notices file). */
function packageOf(file: string, cache: Map<string, PackageInfo | undefined>): PackageInfo | undefined {
  let dir = path.dirname(file);
  while (dir !== path.dirname(dir)) {
    if (cache.has(dir)) return cache.get(dir);
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const json = JSON.parse(fs.readFileSync(manifest, 'utf8')) as Partial<PackageInfo>;
      // Some packages keep a package.json in sub-folders ({"type": "module"}): keep climbing.
      if (json.name && json.version) {
        const licenseFile = fs
          .readdirSync(dir)
          .find((name) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(name));
        const info: PackageInfo = {
          name: json.name,
          version: json.version,
          license: typeof json.license === 'string' ? json.license : 'see the package',
          notice: licenseFile ? fs.readFileSync(path.join(dir, licenseFile), 'utf8').trim() : '',
        };
        cache.set(dir, info);
        return info;
      }
    }
    dir = path.dirname(dir);
  }
  return undefined;
}

/** The licences of the bundled packages: MIT and ISC ask for their notice in every copy. */
function noticesFile(inputs: string[]): string {
  const cache = new Map<string, PackageInfo | undefined>();
  const packages = new Map<string, PackageInfo>();
  for (const input of inputs) {
    if (!input.includes(`${path.sep}node_modules${path.sep}`)) continue;
    const info = packageOf(input, cache);
    if (info) packages.set(`${info.name}@${info.version}`, info);
  }
  const sections = [...packages.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => `${p.name} ${p.version} (${p.license})\n\n${p.notice || '(no licence file in the package)'}`);
  return `The service's web pages bundle these packages from npm:\n\n${sections.join(`\n\n${'-'.repeat(72)}\n\n`)}\n`;
}

const hashedName = (base: string, extension: string, contents: Uint8Array | string) =>
  `${base}-${createHash('sha256').update(contents).digest('hex').slice(0, 12)}${extension}`;

interface Bundle {
  assets: WebAsset[];
  /** Every file the bundle was made from, relative to the project root. */
  inputs: string[];
}

const sourcePath = (file: string) => `${WEB_SOURCES}/${file}`;

function esbuildOptions(root: string): BuildOptions & { write: false; metafile: true } {
  const entries = [...PAGES.flatMap((page) => Object.values(page.entries)), ...LAZY_ENTRIES];
  return {
    absWorkingDir: root,
    entryPoints: entries.map((file) => path.join(root, WEB_SOURCES, file)),
    outdir: path.join(root, WEB_SOURCES, 'out'),
    // File names carry a hash of their contents (esbuild's), as the pages' scripts import them.
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    // What the pages share is a file of its own; what is imported with import() loads when
    // first needed.
    splitting: true,
    bundle: true,
    minify: true,
    format: 'esm',
    // Browsers of 2023 on: <dialog>, CSS nesting is not used, constructable style sheets are.
    target: ['chrome111', 'firefox114', 'safari16.4'],
    write: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
  };
}

/** The bundle's output files, and each source entry's output file name. */
function outputsOf(result: BuildResult<{ write: false; metafile: true }>, root: string) {
  const assets: WebAsset[] = [];
  const byEntry = new Map<string, string>();
  /** Each script's static imports (the shared chunk), by its name. */
  const imports = new Map<string, string[]>();
  for (const output of result.outputFiles) {
    const name = path.basename(output.path);
    // The metafile names files relative to absWorkingDir, with '/'.
    const meta = result.metafile.outputs[path.relative(root, output.path).split(path.sep).join('/')];
    if (meta?.entryPoint) byEntry.set(meta.entryPoint, name);
    const statics = (meta?.imports ?? []).filter((i) => i.kind === 'import-statement');
    imports.set(
      name,
      statics.map((i) => path.basename(i.path)),
    );
    assets.push({ name, contents: Buffer.from(output.contents) });
  }
  return { assets, byEntry, imports };
}

/**
 * A page's HTML with its references replaced by the bundle's file names, and its script's
 * shared files announced (modulepreload), so that the browser asks for them at once rather
 * than after reading the script.
 */
function pageHtml(
  root: string,
  page: PageSource,
  names: Map<string, string>,
  imports: Map<string, string[]>,
) {
  const file = sourcePath(page.html);
  let html = fs.readFileSync(path.join(root, file), 'utf8');
  for (const reference of Object.keys(page.entries)) {
    if (!html.includes(reference)) throw new Error(`${file} does not refer to ${reference}`);
  }
  const preloads = Object.keys(page.entries)
    .flatMap((reference) => imports.get(names.get(reference) ?? '') ?? [])
    .map((chunk) => `    <link rel="modulepreload" href="/assets/${chunk}" />\n`);
  if (!html.includes('\n  </head>')) throw new Error(`${file} has no '  </head>' line`);
  html = html.replace('\n  </head>', `\n${preloads.join('')}  </head>`);
  for (const [reference, name] of names) html = html.replaceAll(reference, `/assets/${name}`);
  return { file, contents: Buffer.from(html) };
}

async function runBundler(root: string): Promise<Bundle> {
  const { build } = await import('esbuild');
  const result = await build(esbuildOptions(root));
  const { assets, byEntry, imports } = outputsOf(result, root);
  const names = new Map<string, string>();
  for (const page of PAGES) {
    for (const [reference, source] of Object.entries(page.entries)) {
      const name = byEntry.get(sourcePath(source));
      if (!name) throw new Error(`the bundle has no file for ${source}`);
      names.set(reference, name);
    }
  }
  const inputs = Object.keys(result.metafile.inputs);
  const notices = noticesFile(inputs.map((input) => path.resolve(root, input)));
  const licenses = hashedName('licenses', '.txt', notices);
  names.set(LICENSES, licenses);
  assets.push({ name: licenses, contents: Buffer.from(notices) });

  for (const [reference, file] of Object.entries(STATIC_FILES)) {
    const contents = fs.readFileSync(path.join(root, sourcePath(file)));
    const name = hashedName(path.basename(file, path.extname(file)), path.extname(file), contents);
    names.set(reference, name);
    assets.push({ name, contents });
    inputs.push(sourcePath(file));
  }
  const pages = PAGES.map((page) => ({ name: page.name, ...pageHtml(root, page, names, imports) }));
  assets.unshift(...pages.map(({ name, contents }) => ({ name, contents })));
  return { assets, inputs: [...inputs, ...pages.map((page) => page.file)] };
}

/** Bundles the pages from the source tree (for the single-file build, which embeds them). */
export async function bundleWebPages(): Promise<WebAsset[]> {
  return (await runBundler(sourceRoot())).assets;
}

/**
 * Brotli at quality 6: 712 kB of script to 194 kB in ~50 ms here; quality 11 saves another 9%
 * but takes 4 s (measured 2026-11-22, load 3).
 */
function compressed(asset: WebAsset): ServedAsset {
  return {
    ...asset,
    gzip: zlib.gzipSync(asset.contents, { level: 6 }),
    brotli: zlib.brotliCompressSync(asset.contents, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 6,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: asset.contents.length,
      },
    }),
  };
}

// --- The cache of the last bundle, in node_modules/.cache ---------------------------------

const CACHE_FORMAT = 1;

interface CachedBundle {
  format: number;
  inputs: string[];
  digest: string;
  assets: { name: string; contents: string; gzip: string; brotli: string }[];
}

const cacheFile = (root: string) => path.join(root, 'node_modules', '.cache', 'web-pages', 'bundle.json');

/** A digest of every input's path and bytes, of this file and of the bundler's version. */
async function digestOf(root: string, inputs: string[]): Promise<string | undefined> {
  const hash = createHash('sha256');
  const { version } = await import('esbuild');
  hash.update(`${CACHE_FORMAT}\0${version}\0`).update(fs.readFileSync(import.meta.filename));
  for (const input of [...inputs].sort()) {
    let contents: Buffer;
    try {
      contents = fs.readFileSync(path.resolve(root, input));
    } catch {
      return undefined; // a file the last bundle read is gone: bundle again
    }
    hash.update(`\0${input}\0${contents.length}\0`).update(contents);
  }
  return hash.digest('hex');
}

async function readCache(root: string): Promise<ServedAsset[] | undefined> {
  let cached: CachedBundle;
  try {
    cached = JSON.parse(fs.readFileSync(cacheFile(root), 'utf8')) as CachedBundle;
  } catch {
    return undefined;
  }
  if (cached.format !== CACHE_FORMAT || !Array.isArray(cached.inputs)) return undefined;
  if ((await digestOf(root, cached.inputs)) !== cached.digest) return undefined;
  return cached.assets.map((asset) => ({
    name: asset.name,
    contents: Buffer.from(asset.contents, 'base64'),
    gzip: Buffer.from(asset.gzip, 'base64'),
    brotli: Buffer.from(asset.brotli, 'base64'),
  }));
}

/** Best effort: a tree that cannot be written to simply bundles at every start. */
async function writeCache(root: string, inputs: string[], assets: ServedAsset[]): Promise<void> {
  const digest = await digestOf(root, inputs);
  if (!digest) return;
  const cached: CachedBundle = {
    format: CACHE_FORMAT,
    inputs,
    digest,
    assets: assets.map((a) => ({
      name: a.name,
      contents: a.contents.toString('base64'),
      gzip: a.gzip.toString('base64'),
      brotli: a.brotli.toString('base64'),
    })),
  };
  const file = cacheFile(root);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(temporary, JSON.stringify(cached));
    // Renamed into place: another process starting at the same time reads a whole file or none.
    fs.renameSync(temporary, file);
  } catch {
    fs.rmSync(temporary, { force: true });
  }
}

async function fromSourceTree(): Promise<ServedAsset[]> {
  const root = sourceRoot();
  const cached = await readCache(root);
  if (cached) return cached;
  const bundle = await runBundler(root);
  const assets = bundle.assets.map(compressed);
  await writeCache(root, bundle.inputs, assets);
  return assets;
}

let loading: Promise<ServedAsset[]> | undefined;

/**
 * The pages' files: the embedded ones in the single-file build, else bundled (or read
 * from the cache) once. A failed bundle (a mistake in the page's sources while developing)
 * is tried again on the next call.
 */
export function webAssets(): Promise<ServedAsset[]> {
  if (!loading) {
    loading = isSingleExecutable()
      ? Promise.resolve(
          Object.entries(embeddedManifest().webAssets ?? {}).map(([name, file]) =>
            compressed({ name, contents: readEmbedded(file) }),
          ),
        )
      : fromSourceTree();
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}
