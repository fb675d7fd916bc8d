import type { IncomingMessage, ServerResponse } from 'node:http';
import parseUrl from 'parseurl';
import { match } from 'path-to-regexp';
import { ServiceUnavailableError } from '../errors';
import { stateOf, type RequestState } from '../exchange';
import { sendError } from '../middleware/errors';
import { readJsonBody } from '../middleware/json-body';
import type { RateLimit } from '../middleware/rate-limit';
import type { Store } from '../store/store';
import type { SignatureCheck } from '../webhooks';
import { answer, replayWebhookDelivery, type Answer } from './respond';

export type PathParams = Record<string, string>;

/** What the operation routes' handlers need. */
export interface OperationRouteDeps {
  store: Store;
  now: () => Date;
}

/**
 * One operation route. Operations are the traffic, so they are served here,
 * ahead of Express: its router and request set-up were most of what the
 * receiver spent beyond bare Node (docs/BENCHMARKS.md). Their other methods
 * are answered by Express (405, OPTIONS) from this same table.
 */
export interface OperationRoute {
  /** An Express route pattern, matched as Express would: any case, an optional trailing slash, a query allowed. */
  path: string;
  operation: string;
  /** The methods served; the 405 answer lists the same ones. */
  methods: readonly string[];
  /** Checks on the path alone, before the body is read. */
  checkPath?: (params: PathParams) => void;
  handle: (body: unknown, params: PathParams, state: RequestState) => Promise<Answer>;
}

export interface IntakeDeps {
  store: Store;
  bodyLimitBytes: number;
  signature?: SignatureCheck;
  rateLimit?: RateLimit;
  /** True once the process has begun to drain: operations then answer 503 and close the connection. */
  isShuttingDown: () => boolean;
}

/** As Express's router decodes path parameters: a malformed escape is a URIError, which errors.ts answers 400. */
function decodeParams(params: Partial<Record<string, string | string[]>>): PathParams {
  const decoded: PathParams = {};
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string') decoded[name] = value.includes('%') ? decodeURIComponent(value) : value;
  }
  return decoded;
}

/**
 * The request listener's first stop: serves the request when it is one of the
 * operation routes with a served method (true), otherwise leaves it (false).
 */
export function operationDispatcher(routes: readonly OperationRoute[], deps: IntakeDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { store, bodyLimitBytes, signature, rateLimit, isShuttingDown } = deps;
  const matchers = routes.map((route) => ({ route, matchPath: match(route.path, { decode: false, sensitive: false, end: true, trailing: true }) }));

  /** Every operation takes its body the same way; true when a repeated signed delivery was answered from the record. */
  async function takeIn(req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<boolean> {
    if (isShuttingDown()) {
      res.setHeader('Connection', 'close');
      throw new ServiceUnavailableError('shutting_down');
    }
    const { body, webhookId } = await readJsonBody(req, bodyLimitBytes, signature);
    state.body = body;
    state.webhookId = webhookId;
    if (rateLimit) await rateLimit(req, res);
    return replayWebhookDelivery(res, store);
  }

  async function serve(route: OperationRoute, rawParams: Partial<Record<string, string | string[]>>, req: IncomingMessage, res: ServerResponse) {
    const state = stateOf(res);
    state.route = route.path;
    state.operation = route.operation;
    try {
      const params = decodeParams(rawParams);
      route.checkPath?.(params);
      if (await takeIn(req, res, state)) return;
      await answer(res, store, await route.handle(state.body, params, state));
    } catch (error) {
      sendError(res, error);
    }
  }

  return (req, res) => {
    // The path as Express's router sees it (parseurl caches it on the request, should Express take it after all).
    const path = parseUrl(req)?.pathname ?? '';
    for (const { route, matchPath } of matchers) {
      if (!route.methods.includes(req.method ?? '')) continue;
      const found = matchPath(path);
      if (!found) continue;
      void serve(route, found.params, req, res);
      return true;
    }
    return false;
  };
}
