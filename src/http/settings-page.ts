import express, { type Request, type Response } from 'express';
import { bundledFiles, sendPage } from './bundled-files.js';
import { SECURITY_HEADERS } from './page-headers.js';

/**
 * The data settings page (DESIGN §8), built from `web/settings/` in the same bundle as the
 * workspace (packaging/web-assets.ts); its script and style sheet are under `/assets/`.
 */

/** Mounted at /settings: the page is /settings/data. */
export function settingsPage(): express.Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  router.use((_req: Request, res: Response, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  const files = bundledFiles();
  // The data section is the only one so far.
  router.get('/', (_req: Request, res: Response) => res.redirect(302, '/settings/data'));
  router.get('/data', (req: Request, res: Response) => sendPage(req, res, files, 'settings.html'));
  return router;
}
