import type { Response } from 'express';
import helmet from 'helmet';

/**
 * helmet's headers (no sniffing, no framing, a strict CSP, …), computed once
 * by running helmet against a recording response: helmet's twelve middleware
 * functions per request were a measurable part of the profile. Answers carry
 * account data, so nothing may be cached.
 */
function securityHeaders(): ReadonlyArray<readonly [string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  } as unknown as Response;
  helmet()({} as never, recorder, () => undefined);
  headers.push(['Cache-Control', 'no-store']);
  return headers;
}

export const SECURITY_HEADERS = securityHeaders();

/** The same headers as one flat name, value, name, value… list, the form writeHead takes fastest. */
export const SECURITY_HEADER_LIST: readonly string[] = SECURITY_HEADERS.flat();
