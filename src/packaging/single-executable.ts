import sea from 'node:sea';
import zlib from 'node:zlib';

/**
 * What the single-file build (scripts/build-binary.ts) embeds, and how the running program
 * reads it back. Node 20's SEA API cannot list assets, so the build writes a manifest
 * under a fixed key; everything else is found through it.
 */

export const MANIFEST_ASSET = 'manifest.json';

export interface EmbeddedFile {
  /** SEA asset key. */
  asset: string;
  /** Size once unpacked, to tell a complete extracted copy from a partial one. */
  size: number;
  /** Brotli-compressed (scripts/build-binary.ts says why brotli). */
  compressed: boolean;
}

export interface EmbeddedManifest {
  version: string;
  /** Folders of the source tree (`queries`): relative path → file. */
  projectFiles: Record<string, Record<string, EmbeddedFile>>;
  /** The web pages' bundled files (web-assets.ts), by name; absent in older builds. */
  webAssets?: Record<string, EmbeddedFile>;
  /** The sandbox's check worker (src/queries/sandbox/check-worker.ts) bundled as CommonJS. */
  sandboxWorker?: EmbeddedFile;
  duckdb: {
    /** Hash of the native files: names the extraction directory, so versions never clash. */
    hash: string;
    /** The addon Node loads; the other files are the shared libraries it links against. */
    addon: string;
    files: Record<string, EmbeddedFile>;
  };
}

export function isSingleExecutable(): boolean {
  return sea.isSea();
}

let manifest: EmbeddedManifest | undefined;

export function embeddedManifest(): EmbeddedManifest {
  manifest ??= JSON.parse(sea.getAsset(MANIFEST_ASSET, 'utf8')) as EmbeddedManifest;
  return manifest;
}

/** The bytes of an embedded file, unpacked. */
export function readEmbedded(file: EmbeddedFile): Buffer {
  // getRawAsset avoids a copy of what may be tens of megabytes; it must never be written to.
  const raw = sea.getRawAsset(file.asset);
  const bytes = typeof raw === 'string' ? Buffer.from(raw) : Buffer.from(raw);
  return file.compressed ? zlib.brotliDecompressSync(bytes) : Buffer.from(bytes);
}
