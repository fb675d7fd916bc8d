import contentType from 'content-type';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors';

function hasBody(headers: NodeJS.Dict<string | string[]>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The media type and charset of the body, or undefined when the header is missing or malformed. */
function mediaType(req: IncomingMessage): { type: string; charset: string | undefined } | undefined {
  try {
    const parsed = contentType.parse(req);
    return { type: parsed.type, charset: parsed.parameters.charset?.toLowerCase() };
  } catch {
    return undefined;
  }
}

/** Reads the whole body, within the limit. Bodies are identity-encoded UTF-8 JSON. */
function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      reject(new UnsupportedMediaTypeError('Unsupported Content-Encoding'));
      return;
    }
    if (Number(req.headers['content-length']) > limitBytes) {
      reject(new PayloadTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      reject(new PayloadTooLargeError());
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('aborted', () => reject(new ValidationError('Request body was not received completely')));
    req.on('error', () => reject(new ValidationError('Request body was not received completely')));
  });
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ValidationError('Malformed JSON body');
  }
}

/**
 * The body of every operation, in the contract's order: it must be present
 * (400), be JSON (415), fit the limit (413) and parse (400). A lean reader in
 * place of express.json(), whose per-request work (type-is, raw-body,
 * iconv) was a measurable part of the profile (docs/BENCHMARKS.md). The raw
 * bytes stay on res.locals for the signature check.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  return async function jsonBody(req, res, next) {
    if (!hasBody(req.headers)) throw new ValidationError('Request body is required: send a JSON object');
    const media = mediaType(req);
    if (media?.type !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json');
    // Partners send UTF-8; nobody should rely on UTF-16 or UTF-32 being decoded.
    if (media.charset !== undefined && media.charset !== 'utf-8') {
      throw new UnsupportedMediaTypeError('Unsupported charset: send the body as UTF-8 JSON');
    }
    try {
      res.locals.rawBody = await readBody(req, limitBytes);
    } catch (error) {
      // The rest of an oversized body is never read: one answer, then the connection closes.
      if (error instanceof PayloadTooLargeError) res.setHeader('Connection', 'close');
      throw error;
    }
    res.locals.body = parseJson(res.locals.rawBody);
    next();
  };
}
