import path from 'node:path';
import express, { type Request, type Response } from 'express';

/**
 * The data settings page (DESIGN §8): plain files from `public/settings`, no build step.
 * The page talks to the API with the key the person types in, so it is locked down: no
 * inline scripts or styles, no other origins, no framing, no referrer.
 */

const PUBLIC_DIR = path.resolve(import.meta.dirname, '../../public/settings');

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
  // The data section is the only one so far.
  router.get('/', (_req: Request, res: Response) => res.redirect(302, '/settings/data'));
  router.get('/data', (_req: Request, res: Response) => {
    res.sendFile(path.join(PUBLIC_DIR, 'index.html'));
  });
  router.use(express.static(PUBLIC_DIR, { index: false, redirect: false, etag: false }));
  return router;
}
