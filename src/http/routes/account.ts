import type { Request, Response, Router } from 'express';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { readQueryParams } from '../query-params.js';

export function accountRoutes(router: Router, deps: AppDeps): void {
  router
    .route('/account')
    .get(authenticate(deps.keys), (req: Request, res: Response) => {
      readQueryParams(req, []);
      const { handle, plan, admin } = accountOf(res);
      res.json({ handle, plan, admin });
    })
    .all(methodNotAllowed('GET'));
}
