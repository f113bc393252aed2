import path from 'node:path';
import type { Request, Response } from 'express';
import { type ServedAsset, webAssets } from '../packaging/web-assets.js';
import { CONTENT_TYPES, SECURITY_HEADERS } from './page-headers.js';

/**
 * Sending the web pages' bundled files (packaging/web-assets.ts), kept in memory with their
 * compressed forms. The pages themselves are revalidated on every load; the files they name
 * carry a hash of their contents, so browsers keep them for good and a new version has new names.
 */

export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The smallest encoding the browser accepts. Weights (`;q=0`) are honoured only as a refusal. */
function encodingFor(req: Request): 'br' | 'gzip' | undefined {
  const accepted = new Set<string>();
  for (const part of String(req.headers['accept-encoding'] ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))) continue;
    accepted.add(name.trim());
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

export function sendAsset(req: Request, res: Response, asset: ServedAsset, cacheControl: string): void {
  const encoding = encodingFor(req);
  const body = encoding === 'br' ? asset.brotli : encoding === 'gzip' ? asset.gzip : asset.contents;
  res.set(SECURITY_HEADERS);
  res.set({
    'Content-Type': CONTENT_TYPES[path.extname(asset.name)] ?? 'application/octet-stream',
    'Cache-Control': cacheControl,
    Vary: 'Accept-Encoding',
  });
  if (encoding) res.set('Content-Encoding', encoding);
  res.end(body);
}

/** The bundle's files by name, indexed once per bundle (bundled, or read back, on first use). */
export function bundledFiles(): () => Promise<Map<string, ServedAsset>> {
  let indexed: { assets: ServedAsset[]; byName: Map<string, ServedAsset> } | undefined;
  return async () => {
    const assets = await webAssets();
    if (indexed?.assets !== assets) indexed = { assets, byName: new Map(assets.map((a) => [a.name, a])) };
    return indexed.byName;
  };
}

/** Sends one of the bundle's pages (`index.html`, `settings.html`). */
export async function sendPage(
  req: Request,
  res: Response,
  files: () => Promise<Map<string, ServedAsset>>,
  name: string,
): Promise<void> {
  const page = (await files()).get(name);
  if (!page) throw new Error(`the web bundle has no ${name}`);
  sendAsset(req, res, page, 'no-cache');
}
