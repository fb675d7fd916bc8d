import express, { type RequestHandler } from 'express';
import { UnsupportedMediaTypeError, ValidationError } from '../errors';

function hasBody(headers: NodeJS.Dict<string | string[]>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The intake of every operation route, in the contract's order: a body must
 * be present (400), be JSON (415), fit the limit (413) and parse (400).
 * Size and parse errors come from the parser and are mapped by the error module.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!hasBody(req.headers)) throw new ValidationError('Request body is required: send a JSON object');
    if (!req.is('application/json')) {
      throw new UnsupportedMediaTypeError('Content-Type must be application/json');
    }
    next();
  };
  return [requireJson, express.json({ limit: limitBytes, strict: true, type: () => true })];
}
