import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { type ServedAsset, workspaceAssets } from '../packaging/web-assets.js';
import { CONTENT_TYPES, SECURITY_HEADERS } from './page-headers.js';

/**
 * The workspace page at `/`: tables, SQL editor, results, charts, saved queries (issue 15).
 * Its files are bundled on first use (packaging/web-assets.ts) and kept in memory with their
 * compressed forms. The page itself is revalidated on every load; the files it names carry
 * a hash of their contents, so browsers keep them for good and a new version has new names.
 */

const IMMUTABLE = 'public, max-age=31536000, immutable';

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

function send(req: Request, res: Response, asset: ServedAsset, cacheControl: string): void {
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

export function workspacePage(): express.Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  let indexed: { assets: ServedAsset[]; byName: Map<string, ServedAsset> } | undefined;
  const files = async () => {
    const assets = await workspaceAssets();
    if (indexed?.assets !== assets) indexed = { assets, byName: new Map(assets.map((a) => [a.name, a])) };
    return indexed.byName;
  };
  router.get('/', async (req: Request, res: Response) => {
    const page = (await files()).get('index.html');
    if (!page) throw new Error('the workspace bundle has no index.html');
    send(req, res, page, 'no-cache');
  });
  router.get('/assets/:name', async (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name);
    const asset = name === 'index.html' ? undefined : (await files()).get(name);
    if (!asset) return next();
    send(req, res, asset, IMMUTABLE);
  });
  return router;
}
