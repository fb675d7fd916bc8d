import type { Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Runs helmet once against a recording response and keeps what it set:
 * helmet's middleware functions on every request were a measurable part of
 * the profile. Answers carry account data, so nothing may be cached.
 */
function recordedHeaders(options?: HelmetOptions): ReadonlyArray<readonly [string, string]> {
  const headers: Array<[string, string]> = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  } as unknown as Response;
  helmet(options)({} as never, recorder, () => undefined);
  headers.push(['Cache-Control', 'no-store']);
  return headers;
}

/**
 * JSON answers: the set OWASP's REST Security Cheat Sheet asks of an API (no
 * sniffing, no framing, a CSP that allows nothing, HSTS, no caching), plus
 * helmet's resource and referrer policies. helmet's other defaults govern how
 * a browser treats a page (DNS prefetch, downloads, cross-domain policies,
 * origin clusters): a JSON answer is no page, and those bytes went out on
 * every request (docs/BENCHMARKS.md).
 */
export const API_HEADERS = recordedHeaders({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  crossOriginEmbedderPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** The same headers as one flat name, value, name, value… list, the form writeHead takes fastest. */
export const API_HEADER_LIST: readonly string[] = API_HEADERS.flat();

/**
 * Pages and files a browser shows (/docs and its assets), the metrics and the document: helmet's defaults, but for
 * the CSP's upgrade-insecure-requests. The service speaks plain HTTP (TLS ends in front of it, if anywhere): reached
 * by any name but localhost, a browser obeying it fetched the page's scripts over https and showed a blank page.
 */
export const PAGE_HEADERS = recordedHeaders({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
