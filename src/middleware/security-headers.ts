import type { RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * helmet's headers (no sniffing, no framing, a strict CSP, …), computed once
 * by running helmet against a recording response, then set by one function:
 * helmet's twelve middleware functions per request were a measurable part
 * of the profile. Answers carry account data, so nothing may be cached.
 */
export function securityHeaders(): RequestHandler {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  } as unknown as Response;
  helmet()({} as never, recorder, () => undefined);
  headers.push(['Cache-Control', 'no-store']);
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
