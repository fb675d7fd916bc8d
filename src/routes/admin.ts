import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { NotFoundError, UnauthorizedError } from '../errors';
import type { EventLog } from '../process/event-log';
import { methodNotAllowed } from '../middleware/errors';
import { sendJson } from '../middleware/send-json';
import { eventQuerySchema } from '../schemas/admin';
import { text, tokenId } from '../schemas/fields';
import { parsePayload } from '../schemas/validate';
import { hashKey, keyMatches } from '../domain/secrets';
import type { Store } from '../store/store';
import type { DeliveryEngine } from '../delivery/engine';
import { endpointRoutes } from './admin-endpoints';
import { bookingView } from './booking-view';
import { ledgerEntryView, tokenView } from './token-view';

const RECENT_LEDGER_ENTRIES = 10;

/** Requires `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
function requireAdmin(adminToken: string): RequestHandler {
  const expected = hashKey(adminToken);
  return (req, res, next) => {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!match || !keyMatches(match[1], expected)) {
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
  delivery,
  bodyLimitBytes,
}: {
  store: Store;
  events: EventLog;
  adminToken: string;
  limits: RequestHandler[];
  /** Webhooks out; unset when the seed lists no endpoint. */
  delivery: DeliveryEngine | undefined;
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

  endpointRoutes(router, delivery, bodyLimitBytes);
  return router;
}
