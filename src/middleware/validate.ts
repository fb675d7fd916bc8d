import type { RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { fieldProblems, validationError } from '../schemas/validate';
import { requestContext } from './request-context';

/** The validation step of a route's chain, and how its handler reads what it validated. */
export interface Validator<Input> extends RequestHandler {
  input(res: Response): Input;
}

/**
 * Checks the parsed body, and with a path schema the path parameters too,
 * naming every bad field of both at once (400). The handler then reads the
 * typed, normalised values with `input(res)`.
 */
export function validate<Body extends z.ZodType>(bodySchema: Body): Validator<z.output<Body>>;
export function validate<Body extends z.ZodType, Path extends z.ZodType>(
  bodySchema: Body,
  pathSchema: Path,
): Validator<{ body: z.output<Body>; path: z.output<Path> }>;
export function validate(bodySchema: z.ZodType, pathSchema?: z.ZodType): Validator<unknown> {
  const inputs = new WeakMap<Response, unknown>();
  const middleware: RequestHandler = function validate(req, res, next) {
    const path = pathSchema?.safeParse(req.params);
    const body = bodySchema.safeParse(requestContext(res).body.parsed);
    if (!body.success || (path && !path.success)) {
      throw validationError([...(path && !path.success ? fieldProblems(path.error.issues) : []), ...(body.success ? [] : fieldProblems(body.error.issues))]);
    }
    inputs.set(res, path ? { body: body.data, path: path.data } : body.data);
    next();
  };
  return Object.assign(middleware, {
    input(res: Response): unknown {
      if (!inputs.has(res)) throw new Error('validate() did not run before this handler');
      return inputs.get(res);
    },
  });
}
