import path from 'node:path';
import express, { type Request, type Response } from 'express';
import { projectFiles } from '../packaging/project-files.js';
import { CONTENT_TYPES, SECURITY_HEADERS } from './page-headers.js';

/**
 * The data settings page (DESIGN §8): plain files from `public/settings`, no build step.
 */

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
