import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { SECURITY_HEADER_LIST, SECURITY_HEADERS } from './middleware/security-headers';

/**
 * What one request carries between the steps that serve it, on either path
 * (the operation routes, or Express for the rest): read by the request log,
 * the metrics and the event log when the answer is finished.
 */
export interface RequestState {
  /** The pattern of the operation route that answered; Express's routes name theirs in req.route. */
  route?: string;
  operation?: string;
  /** The parsed body of an operation, for its identifying fields: never logged whole. */
  body?: unknown;
  webhookId?: string;
  /** Answered 200 as a repeat of an applied request: nothing was applied again. */
  replayed?: boolean;
  errorReason?: string;
}

/** The state lives where Express keeps its own per-request locals, so both paths share it. */
export function stateOf(res: ServerResponse): RequestState {
  return (res as ServerResponse & { locals: RequestState }).locals;
}

export function startRequestState(res: ServerResponse): void {
  (res as ServerResponse & { locals: RequestState }).locals = {};
}

/** The id the request log gave the request (pino-http sets req.id). */
export function requestIdOf(res: ServerResponse): string {
  return String((res.req as IncomingMessage & { id?: unknown }).id);
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Writes a JSON answer with every common header in one writeHead: no
 * per-header setHeader calls, no content negotiation, no ETag; these answers
 * are never cached. Headers set earlier (Express's routes, the rate limiter)
 * are kept; the ones named here win.
 */
export function sendJson(res: ServerResponse, status: number, body: string, headers: Readonly<Record<string, string>> = {}): void {
  const list = [...SECURITY_HEADER_LIST, 'X-Request-Id', requestIdOf(res), 'Content-Type', JSON_CONTENT_TYPE, 'Content-Length', String(Buffer.byteLength(body))];
  for (const name of Object.keys(headers)) list.push(name, headers[name]);
  res.writeHead(status, list);
  res.end(body);
}

/** For Express's routes, which answer through res.json and friends: the same headers, set up front. */
export const commonHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
  res.setHeader('X-Request-Id', requestIdOf(res));
  next();
};
