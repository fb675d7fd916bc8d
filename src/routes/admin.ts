import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { NotFoundError, UnauthorizedError } from '../errors';
import type { EventLog } from '../event-log';
import { methodNotAllowed } from '../middleware/errors';
import { sendJson } from '../middleware/send-json';
import { formatAmount } from '../money';
import { eventQuerySchema } from '../schemas/admin';
import { formatDay, text, tokenId } from '../schemas/fields';
import { parsePayload } from '../schemas/validate';
import { hashKey, keyMatches } from '../secrets';
import type { Store } from '../store/store';
import { bookingView } from './booking-view';

const RECENT_WITHDRAWALS = 10;

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

/** Read-only inspection for ops and developers; mounted only when ADMIN_TOKEN is set. Never shows keys or secrets. */
export function adminRouter({ store, events, adminToken }: { store: Store; events: EventLog; adminToken: string }): Router {
  const router = Router();
  router.use('/admin', requireAdmin(adminToken));

  router
    .route('/admin/tokens/:tokenId')
    .get(async (req, res) => {
      const id = parsePayload(z.object({ tokenId }), req.params).tokenId;
      const token = await store.findToken(id);
      if (!token) throw new NotFoundError('Token not found');
      const withdrawals = await store.recentWithdrawals(id, RECENT_WITHDRAWALS);
      sendJson(
        res,
        200,
        JSON.stringify({
          token_id: token.tokenId,
          source_id: token.sourceId,
          destination_id: token.destinationId,
          status: token.status,
          balance: formatAmount(token.balance),
          ...(token.availableDay === undefined ? {} : { available_date: formatDay(token.availableDay) }),
          ...(token.expiryDay === undefined ? {} : { expiry_date: formatDay(token.expiryDay) }),
          last_withdrawals: withdrawals.map((w) => ({
            transaction_id: w.transactionId,
            withdrawn_amount: formatAmount(w.amount),
            token_balance: formatAmount(w.tokenBalance),
            created_at: w.createdAt.toISOString(),
          })),
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

  return router;
}
