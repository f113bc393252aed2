import path from 'node:path';
import express, { type Request, type Response } from 'express';
import { projectFiles } from '../packaging/project-files.js';

/**
 * The data settings page (DESIGN §8): plain files from `public/settings`, no build step.
 * The page talks to the API with the key the person types in, so it is locked down: no
 * inline scripts or styles, no other origins, no framing, no referrer.
 */

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-cache',
};

/** Mounted at /settings: the page is /settings/data, its files /settings/<name>. */
export function settingsPage(): express.Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  router.use((_req: Request, res: Response, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  // Held in memory: a few kilobytes, and the single-file build has no folder to serve from.
  const files = new Map(projectFiles('public/settings').map((file) => [file.name, file.contents]));
  const send = (res: Response, name: string) => {
    res.type(CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream');
    res.send(files.get(name));
  };
  // The data section is the only one so far.
  router.get('/', (_req: Request, res: Response) => res.redirect(302, '/settings/data'));
  router.get('/data', (_req: Request, res: Response) => send(res, 'index.html'));
  router.get('/{*file}', (req: Request, res: Response, next) => {
    let name: string;
    try {
      name = decodeURIComponent(req.path.slice(1));
    } catch {
      return next();
    }
    if (!files.has(name)) return next();
    send(res, name);
  });
  return router;
}
