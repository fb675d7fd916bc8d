import { isUtf8 } from 'node:buffer';
import { parse as parseContentType } from 'content-type';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors';
import { requestContext } from './request-context';

function hasBody(headers: NodeJS.Dict<string | string[]>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The media type and charset of the body, or undefined when the header is missing. */
function mediaType(req: IncomingMessage): { type: string; charset: string | undefined } | undefined {
  const header = req.headers['content-type'];
  if (header === undefined) return undefined;
  const parsed = parseContentType(header);
  return { type: parsed.type, charset: parsed.parameters.charset?.toLowerCase() };
}

/**
 * Reads the whole body, within the limit. Bodies are identity-encoded UTF-8 JSON. A client that asked to
 * be told first (Expect: 100-continue) is told to send only once its declared size is known to fit.
 */
function readBody(req: IncomingMessage, limitBytes: number, sendContinue: () => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      reject(new UnsupportedMediaTypeError('Unsupported Content-Encoding'));
      return;
    }
    if (Number(req.headers['content-length']) > limitBytes) {
      reject(new PayloadTooLargeError(limitBytes));
      return;
    }
    if (req.headers.expect?.toLowerCase() === '100-continue') sendContinue();
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limitBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      reject(new PayloadTooLargeError(limitBytes));
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('aborted', () => reject(new ValidationError('Request body was not received completely')));
    req.on('error', () => reject(new ValidationError('Request body was not received completely')));
  });
}

/** Whether parsing `text` fails inside it, rather than only because it ends too soon. */
function failsInside(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch (error) {
    const message = (error as Error).message;
    const stated = / at position (\d+)/.exec(message);
    return !message.startsWith('Unexpected end of JSON input') && !(stated && Number(stated[1]) >= text.length);
  }
}

/**
 * Where JSON.parse gave up: the first character that no JSON could continue
 * with, or the end. V8 does not say for every error, so the shortest prefix
 * that fails inside itself finds it (a binary search, on the failure path only).
 */
function failurePosition(text: string): number {
  if (!failsInside(text)) return text.length;
  let low = 1;
  let high = text.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (failsInside(text.slice(0, middle))) high = middle;
    else low = middle + 1;
  }
  return low - 1;
}

/** Says where, in lines and columns, and never echoes the body: it may carry keys. */
function describeFailure(text: string): string {
  const position = failurePosition(text);
  const before = text.slice(0, position).split('\n');
  const where = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
  if (position >= text.length) return `Malformed JSON body: it ends at ${where} before the JSON is complete`;
  return `Malformed JSON body: unexpected ${JSON.stringify(text[position])} at ${where}`;
}

function parseJson(body: Buffer): unknown {
  // Decoding would turn bytes that are not UTF-8 into U+FFFD and store text the partner never sent.
  if (!isUtf8(body)) throw new ValidationError('Request body is not valid UTF-8');
  const text = body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError(describeFailure(text));
  }
}

/**
 * The body of every operation, in the contract's order: it must be present
 * (400), be JSON (415), fit the limit (413) and parse (400). A lean reader in
 * place of express.json(), whose per-request work (type-is, raw-body,
 * iconv) was a measurable part of the profile (docs/BENCHMARKS.md). The raw
 * bytes go into the request's context with the parse, for the signature check.
 */
export function readJsonBody(limitBytes: number): RequestHandler {
  return async function readJsonBody(req, res, next) {
    if (!hasBody(req.headers)) throw new ValidationError('Request body is required: send a JSON object');
    const media = mediaType(req);
    if (media?.type !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json');
    // Partners send UTF-8; nobody should rely on UTF-16 or UTF-32 being decoded.
    if (media.charset !== undefined && media.charset !== 'utf-8') {
      throw new UnsupportedMediaTypeError('Unsupported charset: send the body as UTF-8 JSON');
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, limitBytes, () => res.writeContinue());
    } catch (error) {
      // The rest of an oversized body is never read: one answer, then the connection closes.
      if (error instanceof PayloadTooLargeError) res.setHeader('Connection', 'close');
      throw error;
    }
    requestContext(res).body = { raw, parsed: parseJson(raw) };
    next();
  };
}
