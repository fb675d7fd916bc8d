import type { RequestHandler } from 'express';
import type { FieldProblem } from '../domain/field-problem';
import { NotFoundError } from '../errors';
import { requestContext } from '../middleware/request-context';
import { validationError } from '../schemas/validate';

const SUPPORTED_VERSIONS: ReadonlySet<string> = new Set(['v1']);

/** The version is checked on the path alone, before the body is read; like the rest of the path, in any case. */
export const supportedVersion: RequestHandler = function supportedVersion(req, _res, next) {
  if (!SUPPORTED_VERSIONS.has(String(req.params.version).toLowerCase()))
    throw new NotFoundError('Unsupported API version', 'unsupported_version');
  next();
};

/** A body of another operation of the path, told which method takes it; it would otherwise be told of every field that operation does not send. */
export function refuseOtherOperation(otherOperation: (body: unknown) => FieldProblem | undefined): RequestHandler {
  return function refuseOtherOperation(_req, res, next) {
    const problem = otherOperation(requestContext(res).body.parsed);
    if (problem) throw validationError([problem]);
    next();
  };
}
