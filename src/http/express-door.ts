import type { Express, NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { Identity } from '../auth/key-store.js';
import { presentedKey } from './presented-key.js';
import { loggedPath } from './request-log.js';
import { routeLabel, storedBytes } from './request-metrics.js';
import type { Exchange, Outcome, RequestStep } from './request-step.js';

/**
 * The pipeline's steps as express middlewares. Each request's `Exchange` is made by the first
 * step it meets and kept in `res.locals`, where the routes find the account (`accountOf`).
 */

class ExpressExchange implements Exchange {
  identity: Identity | undefined = undefined;

  constructor(
    readonly req: Request,
    readonly res: Response,
  ) {}

  get key(): string | undefined {
    return presentedKey(this.req);
  }

  outcome(): Outcome {
    return {
      route: routeLabel(this.req, this.res),
      path: loggedPath(this.req),
      handle: this.identity?.account.handle,
      stored: storedBytes(this.res),
    };
  }
}

/** The exchange of an express request, made on first use. */
export function exchangeOf(req: Request, res: Response): Exchange {
  const kept = res.locals.exchange as ExpressExchange | undefined;
  if (kept) return kept;
  const exchange = new ExpressExchange(req, res);
  res.locals.exchange = exchange;
  return exchange;
}

/** The identity an earlier step found for an express request, if any. */
export function identityOf(res: Response): Identity | undefined {
  return (res.locals.exchange as Exchange | undefined)?.identity;
}

export function mountStep(step: RequestStep): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => step.run(exchangeOf(req, res), next);
}

/**
 * Mounts the list in its order: the steps of every request on the app, before anything else
 * is mounted there; the rest on the API's router, before its routes.
 */
export function mountSteps(app: Express, api: Router, steps: readonly RequestStep[]): void {
  let apiSteps = false;
  for (const step of steps) {
    if (!step.everyRequest) {
      apiSteps = true;
      api.use(mountStep(step));
    } else if (apiSteps) {
      throw new Error(`the step "${step.name}" runs on every request: it must come before the API's steps`);
    } else app.use(mountStep(step));
  }
}
