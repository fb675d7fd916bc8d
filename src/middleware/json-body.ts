import contentType from 'content-type';
import express, { type Request, type RequestHandler } from 'express';
import { UNSUPPORTED_CHARSET_MESSAGE, UnsupportedMediaTypeError, ValidationError } from '../errors';
import type { SignatureCheck } from '../webhooks';

function hasBody(headers: NodeJS.Dict<string | string[]>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The media type and charset of the body, or undefined when the header is missing or malformed. */
function mediaType(req: Request): { type: string; charset: string | undefined } | undefined {
  try {
    const parsed = contentType.parse(req);
    return { type: parsed.type, charset: parsed.parameters.charset?.toLowerCase() };
  } catch {
    return undefined;
  }
}

/**
 * The intake of every operation route, in the contract's order: a body must
 * be present (400), be JSON (415), fit the limit (413) and parse (400).
 * Size and parse errors come from the parser and are mapped by the error module.
 * With a signature check, the raw bytes are verified (401) before they are parsed.
 */
export function jsonBody(limitBytes: number, signature?: SignatureCheck): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!hasBody(req.headers)) throw new ValidationError('Request body is required: send a JSON object');
    const media = mediaType(req);
    if (media?.type !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json');
    // Partners send UTF-8; the parser would also decode UTF-16 and UTF-32, which nobody should rely on.
    if (media.charset !== undefined && media.charset !== 'utf-8') throw new UnsupportedMediaTypeError(UNSUPPORTED_CHARSET_MESSAGE);
    next();
  };
  if (!signature) return [requireJson, express.json({ limit: limitBytes, strict: true, type: () => true })];

  const verifyThenParse: RequestHandler = (req, res, next) => {
    const raw = req.body as Buffer;
    res.locals.webhookId = signature.verify(raw, req.headers);
    try {
      req.body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ValidationError('Malformed JSON body');
    }
    next();
  };
  return [requireJson, express.raw({ limit: limitBytes, type: () => true }), verifyThenParse];
}
