import type { RequestHandler, Response } from 'express';
import { changeView } from '../delivery/change-view';
import type { ChangeFeed, FeedRequest } from '../delivery/feed';
import { requestContext } from '../middleware/request-context';
import { sendJson } from '../middleware/send-json';
import type { FeedQuery } from '../schemas/feed';

/** The feed's request from its validated query, for the account it names. */
export function feedRequest(sourceId: string, { after, limit, types, wait }: FeedQuery): FeedRequest {
  return { sourceId, after, limit, types, waitSeconds: wait };
}

/**
 * Answers one page of the feed. A wait ends with the page it has (empty) when the client goes away (its slot is
 * freed at once) or when the process begins to drain (`stopWaiting`), so the drain closes the connection after a
 * 200 rather than cutting it.
 */
export async function answerFeed(res: Response, feed: ChangeFeed, request: FeedRequest, stopWaiting: AbortSignal): Promise<void> {
  // A signal of the request's own, its listeners removed with it: none is left on the process's long-lived one.
  const stop = new AbortController();
  const abort = () => stop.abort();
  if (stopWaiting.aborted) abort();
  res.once('close', abort);
  stopWaiting.addEventListener('abort', abort, { once: true });
  try {
    const page = await feed.page(request, stop.signal);
    sendJson(res, 200, JSON.stringify({ changes: page.changes.map(changeView), next_after: page.nextAfter, has_more: page.hasMore }));
  } finally {
    res.off('close', abort);
    stopWaiting.removeEventListener('abort', abort);
  }
}

/** The last step of the feed's chain: the page of the account that authenticated. */
export function serveFeed(feed: ChangeFeed, stopWaiting: AbortSignal): RequestHandler {
  return async function serveFeed(_req, res) {
    const context = requestContext(res);
    await answerFeed(res, feed, feedRequest(context.account.sourceId, context.input.query as FeedQuery), stopWaiting);
  };
}
