import type { Request, Response, Router } from 'express';
import {
  datasetToApi,
  findDataset,
  listDatasets,
  parseDatasetName,
  parseDatasetTypes,
} from '../../datasets/dataset-catalog.js';
import { notFound } from '../../errors.js';
import { keyUsage, readUsageRequest } from '../../usage/key-usage.js';
import type { AppDeps } from '../app-deps.js';
import { accountOf, authenticate } from '../authenticate.js';
import { readJsonBody } from '../json-body.js';
import { methodNotAllowed } from '../method-not-allowed.js';
import { integerParam, readQueryParams } from '../query-params.js';

const DEFAULT_LIMIT = 50;
/** Dune's bound on a page of datasets. */
const MAX_LIMIT = 250;
const MAX_USAGE_BODY = 4096;

/** Dune's Datasets API (every table a key may read) and its usage endpoint. */
export function datasetRoutes(router: Router, deps: AppDeps): void {
  const auth = authenticate(deps.keys);

  router
    .route('/datasets')
    .get(auth, async (req: Request, res: Response) => {
      const params = readQueryParams(req, ['limit', 'offset', 'owner_handle', 'type']);
      const limit = integerParam('limit', params.get('limit'), { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT;
      const offset = integerParam('offset', params.get('offset'), { min: 0 }) ?? 0;
      const owner = params.get('owner_handle');
      const types = parseDatasetTypes(params.get('type'));
      const { datasets, total } = await deps.database.read((session) =>
        listDatasets(
          session,
          accountOf(res),
          { ...(owner !== undefined ? { ownerHandle: owner } : {}), ...(types ? { types } : {}) },
          { limit, offset },
        ),
      );
      res.json({ datasets: datasets.map(datasetToApi), total });
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/datasets/:slug')
    .get(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const slug = String(req.params.slug);
      const ref = parseDatasetName(slug);
      const dataset =
        ref && (await deps.database.read((session) => findDataset(session, accountOf(res), ref)));
      if (!dataset) throw notFound(`no dataset named ${JSON.stringify(slug.slice(0, 200))}`);
      res.json(datasetToApi(dataset));
    })
    .all(methodNotAllowed('GET'));

  router
    .route('/usage')
    .post(auth, async (req: Request, res: Response) => {
      readQueryParams(req, []);
      const request = readUsageRequest(await readJsonBody(req, MAX_USAGE_BODY));
      const { database, executions, queries } = deps;
      const bytesAllowed = deps.config.resultStoragePerKey;
      res.json(await keyUsage({ database, executions, queries, bytesAllowed }, accountOf(res), request));
    })
    .all(methodNotAllowed('POST'));
}
