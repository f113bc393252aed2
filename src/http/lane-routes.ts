import type { ServerResponse } from 'node:http';
import type { IRoute, Request, Response, Router } from 'express';
import type { Account } from '../auth/account.js';
import { accountOf } from './authenticate.js';
import { mountStep } from './express-door.js';
import type { RequestStep } from './request-step.js';

/**
 * The GET routes that declare themselves lane-eligible: the fast lane (fast-lane.ts) may
 * answer them in front of express, so they see a request only as a `RouteRequest` and answer
 * on a bare ServerResponse. Declared here, a route is registered with express too, where it
 * must be the first route of its path (the results routes come first in app.ts).
 */

/** What a lane-eligible route reads of a request, the same in both doors. */
export interface RouteRequest {
  /** The URL as sent: path and query string. */
  originalUrl: string;
  /** The prefix the API was reached by (`/v1`, `/api/v1`): the base of links handed out. */
  baseUrl: string;
  /** The path's parameters by name (`:queryId`), decoded. */
  params: Record<string, string>;
  /** Whose key it carried (authenticated before the route answers). */
  account: Account;
}

export interface LaneRoute {
  /** The path under the API's prefix, in express's syntax: `/query/:queryId/results`. */
  path: string;
  /** Answers a GET; a rejection is answered as an error. */
  answer(request: RouteRequest, res: ServerResponse): Promise<void>;
}

export class LaneRoutes {
  readonly routes: LaneRoute[] = [];

  /** @param authenticate the pipeline's, run before each route in both doors. */
  constructor(private readonly authenticate: RequestStep) {}

  /** Registers a GET route with express and the lane; returns express's route, for its other methods. */
  get(router: Router, path: string, answer: LaneRoute['answer']): IRoute {
    this.routes.push({ path, answer });
    const viaExpress = (req: Request, res: Response) => {
      const params = req.params as Record<string, string>;
      const request = { originalUrl: req.originalUrl, baseUrl: req.baseUrl, params, account: accountOf(res) };
      return answer(request, res);
    };
    return router.route(path).get(mountStep(this.authenticate), viaExpress);
  }
}
