import express, { type NextFunction, type Request, type Response } from 'express';
import { isPage } from '../packaging/web-assets.js';
import { bundledFiles, IMMUTABLE, sendAsset, sendPage } from './bundled-files.js';

/**
 * The workspace page at `/`: tables, SQL editor, results, charts, saved queries (issue 15),
 * and the files of every page under `/assets/` (bundled-files.ts).
 */

export function workspacePage(): express.Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  const files = bundledFiles();
  router.get('/', (req: Request, res: Response) => sendPage(req, res, files, 'index.html'));
  router.get('/assets/:name', async (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name);
    const asset = isPage(name) ? undefined : (await files()).get(name);
    if (!asset) return next();
    sendAsset(req, res, asset, IMMUTABLE);
  });
  return router;
}
