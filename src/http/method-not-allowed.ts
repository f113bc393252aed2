import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors.js';

/** For `route.all(...)` after a route's methods: the path exists, the method does not. */
export function methodNotAllowed(...allowed: string[]) {
  const allow = allowed.join(', ');
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(
      new ApiError('method_not_allowed', `method ${req.method} is not allowed here; use ${allow}`, {
        Allow: allow,
      }),
    );
  };
}
