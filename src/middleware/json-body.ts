import contentType from 'content-type';
import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors';
import type { SignatureCheck } from '../webhooks';

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

/**
 * Reads the whole body, within the limit: a lean reader in place of Express's body parser, which was a
 * measurable part of the hot path (docs/BENCHMARKS.md). Bodies are identity-encoded UTF-8 JSON.
 */
function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      reject(new UnsupportedMediaTypeError('Unsupported Content-Encoding'));
      return;
    }
    if (Number(req.headers['content-length']) > limitBytes) {
      req.resume();
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
      req.resume();
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

export interface JsonBody {
  body: unknown;
  /** The webhook-id of a signed notification, once its signature has been verified. */
  webhookId?: string;
}

/**
 * The body of every operation, in the contract's order: it must be present
 * (400), be JSON (415), fit the limit (413) and parse (400). With a signature
 * check, the raw bytes are verified (401) before they are parsed.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number, signature?: SignatureCheck): Promise<JsonBody> {
  if (!hasBody(req.headers)) throw new ValidationError('Request body is required: send a JSON object');
  const media = mediaType(req);
  if (media?.type !== 'application/json') throw new UnsupportedMediaTypeError('Content-Type must be application/json');
  // Partners send UTF-8; nobody should rely on UTF-16 or UTF-32 being decoded.
  if (media.charset !== undefined && media.charset !== 'utf-8') {
    throw new UnsupportedMediaTypeError('Unsupported charset: send the body as UTF-8 JSON');
  }
  const raw = await readBody(req, limitBytes);
  const webhookId = signature?.verify(raw, req.headers);
  return { body: parseJson(raw), webhookId };
}
