import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { NotFoundError, UnauthorizedError } from '../errors';
import type { EventLog } from '../process/event-log';
import { methodNotAllowed } from '../middleware/errors';
import { bearerToken } from '../middleware/authenticate';
import { sendJson } from '../middleware/send-json';
import { eventQuerySchema } from '../schemas/admin';
import { adminFeedQuerySchema } from '../schemas/feed';
import { text, tokenId } from '../schemas/fields';
import { parsePayload } from '../schemas/validate';
import { hashKey, keyMatches } from '../domain/secrets';
import type { Store } from '../store/store';
import type { ChangeFeed } from '../delivery/feed';
import type { DeliveryControl } from '../delivery/engine';
import { endpointRoutes } from './admin-endpoints';
import { bookingView } from './booking-view';
import { answerFeed, feedRequest } from './changes-feed';
import { ledgerEntryView, tokenView } from './token-view';

const RECENT_LEDGER_ENTRIES = 10;

/** Requires `Authorization: Bearer <ADMIN_TOKEN>` (the scheme in any case, as the feed's), compared in constant time. */
function requireAdmin(adminToken: string): RequestHandler {
  const expected = hashKey(adminToken);
  return (req, res, next) => {
    const token = bearerToken(req.headers.authorization);
    if (token === undefined || !keyMatches(token, expected)) {
      res.set('WWW-Authenticate', 'Bearer realm="admin"');
      throw new UnauthorizedError();
    }
    next();
  };
}

/**
 * Inspection for ops and developers, and webhooks out's enable and replay; mounted only when ADMIN_TOKEN is set.
 * Never shows keys or secrets. `limits` (the per-address rate limit) runs first, so guessing the token counts against the
 * client's address like any other failed request.
 */
export function adminRouter({
  store,
  events,
  adminToken,
  limits,
  feed,
  stopWaiting,
  delivery,
  bodyLimitBytes,
}: {
  store: Store;
  events: EventLog;
  adminToken: string;
  limits: RequestHandler[];
  /** Any account's feed, its waits bounded apart from the account's own (ops watching never takes a partner's slot). */
  feed: ChangeFeed;
  stopWaiting: AbortSignal;
  /** Webhooks out; unset when the seed lists no endpoint. */
  delivery: DeliveryControl | undefined;
  bodyLimitBytes: number;
}): Router {
  const router = Router();
  router.use('/admin', ...limits, requireAdmin(adminToken));

  router
    .route('/admin/tokens/:tokenId')
    .get(async (req, res) => {
      const id = parsePayload(z.object({ tokenId }), req.params).tokenId;
      const token = await store.findToken(id);
      if (!token) throw new NotFoundError('Token not found');
      const entries = await store.recentLedgerEntries(id, RECENT_LEDGER_ENTRIES);
      sendJson(
        res,
        200,
        JSON.stringify({
          ...tokenView(token),
          last_ledger_entries: entries.map((entry) => ledgerEntryView(entry)),
        }),
      );
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/admin/bookings/:sourceId/:bookingId')
    .get(async (req, res) => {
      const { sourceId, bookingId } = parsePayload(z.object({ sourceId: text(), bookingId: text() }), req.params);
      const booking = await store.findBooking(sourceId, bookingId);
      if (!booking) throw new NotFoundError('Booking not found', 'booking_not_found');
      sendJson(res, 200, JSON.stringify({ booking: bookingView(booking) }));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/admin/events')
    .get((req, res) => {
      const filter = parsePayload(eventQuerySchema, req.query);
      sendJson(res, 200, JSON.stringify({ events: events.list(filter) }));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/admin/changes')
    .get(async (req, res) => {
      const { source_id: sourceId, ...query } = parsePayload(adminFeedQuerySchema, req.query);
      await answerFeed(res, feed, feedRequest(sourceId, query), stopWaiting);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  endpointRoutes(router, store, delivery, bodyLimitBytes);
  return router;
}
