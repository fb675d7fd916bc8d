import type { RequestHandler } from 'express';
import type { z } from 'zod';
import { fieldProblems, validationError } from '../schemas/validate';
import { requestContext } from './request-context';

/**
 * Checks the parsed body, and with a path schema the path parameters too, naming every bad field of both at once
 * (400). The typed, normalised values go into the request's context (`input`), for the steps after it.
 */
export function validate(bodySchema: z.ZodType, pathSchema?: z.ZodType): RequestHandler {
  return function validate(req, res, next) {
    const context = requestContext(res);
    const path = pathSchema?.safeParse(req.params);
    const body = bodySchema.safeParse(context.body.parsed);
    if (!body.success || (path && !path.success)) {
      throw validationError([
        ...(path && !path.success ? fieldProblems(path.error.issues) : []),
        ...(body.success ? [] : fieldProblems(body.error.issues)),
      ]);
    }
    context.input = { body: body.data, path: path?.data };
    next();
  };
}

/**
 * A request without a body (the feed): its path parameters and query, every bad one named at once (400), typed
 * and normalised into the request's context (`input.path`, `input.query`).
 */
export function validateQuery(querySchema: z.ZodType, pathSchema: z.ZodType): RequestHandler {
  return function validateQuery(req, res, next) {
    const path = pathSchema.safeParse(req.params);
    const query = querySchema.safeParse(req.query);
    if (!path.success || !query.success) {
      throw validationError([
        ...(path.success ? [] : fieldProblems(path.error.issues)),
        ...(query.success ? [] : fieldProblems(query.error.issues)),
      ]);
    }
    requestContext(res).input = { body: undefined, path: path.data, query: query.data };
    next();
  };
}
