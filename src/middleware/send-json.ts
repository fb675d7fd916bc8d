import type { RequestHandler, Response } from 'express';
import { requestContext } from './request-context';
import { API_HEADER_LIST, PAGE_HEADERS } from './security-headers';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The one way a JSON answer is written: every common header in one
 * writeHead, no per-header setHeader calls, no content negotiation, no ETag
 * (res.json did all three, which showed in the profile). These answers are
 * never cached. Headers set earlier (the rate limiter's, say) are kept; the
 * ones named here win. A body sent often (the OpenAPI document) comes already encoded.
 */
export function sendJson(res: Response, status: number, body: string | Buffer, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(
    status,
    headerList(res, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': String(Buffer.byteLength(body)), ...headers }),
  );
  res.end(body);
}

/** An answer without a body (OPTIONS), with the same common headers. */
export function sendNoContent(res: Response, headers: Readonly<Record<string, string>>): void {
  res.writeHead(204, headerList(res, headers));
  res.end();
}

/** The API headers, the request id and these, as the flat name, value, … list writeHead takes. */
function headerList(res: Response, headers: Readonly<Record<string, string>>): string[] {
  const list = [...API_HEADER_LIST, 'X-Request-Id', requestContext(res).requestId];
  for (const name of Object.keys(headers)) list.push(name, headers[name]);
  return list;
}

/** For the routes that answer something other than JSON (the /docs page and its files, the metrics): helmet's page headers, set up front. */
export const commonHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of PAGE_HEADERS) res.setHeader(name, value);
  res.setHeader('X-Request-Id', requestContext(res).requestId);
  next();
};
