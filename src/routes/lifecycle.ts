/**
 * The request lifecycle of every operation, in one place (fastify's named lifecycle is the model): chainOf gives
 * the whole ordered chain of a catalogue entry, by its kind, in the contract's order of checks. app.ts makes the
 * shared steps (receive, afterAuthentication) once and mounts one router per path (routes/operation.ts); what each
 * step learns goes into the request's context (middleware/request-context.ts), where the steps after it read it.
 */
import type { RequestHandler } from 'express';
import type { z } from 'zod';
import type { ChangeFeed } from '../delivery/feed';
import { authenticate, authenticateBearer } from '../middleware/authenticate';
import { validate, validateQuery } from '../middleware/validate';
import {
  tokenChangesByEvent,
  tokenNotificationsByEvent,
  type KeyedOperation,
  type KeyedResults,
  type Operation,
  type TokenNotification,
} from '../operations/catalogue';
import { keyedPathSchema } from '../schemas/booking';
import { tokenChangeEventSchema } from '../schemas/token-change';
import { TOKEN_EVENTS, tokenEventSchema } from '../schemas/token-event';
import { parsePayload } from '../schemas/validate';
import type { Quotas } from '../services/keyed-requests';
import type { Store } from '../store/store';
import { applyInOneUnit } from './apply-in-one-unit';
import { bookingView } from './booking-view';
import { serveFeed } from './changes-feed';
import { refuseOtherOperation, supportedVersion } from './operation-checks';
import { dispatchOnEvent, nameOperation, type DispatchTarget } from './operation-naming';
import { tokenMovementView, tokenView } from './token-view';

/** The shared steps and settings every operation's chain is built from; app.ts makes the steps once, so their counters are shared too. */
export interface OperationSteps {
  store: Store;
  now: () => Date;
  /**
   * Receiving the request, in the contract's order before the schema: refuse while draining (503), limit per address
   * (429), read the JSON body (415, 413, 400), find the account it names, verify its signature (401).
   */
  receive: RequestHandler[];
  /** Receiving a request without a body (the feed): refuse while draining (503), limit per address (429). */
  intake: RequestHandler[];
  /** Rate limit per account (429). */
  afterAuthentication: RequestHandler[];
  /** ALLOW_KEYLESS_STATUS_CHANGE: a Status Change without share_public, for an account that exists. */
  allowKeylessStatusChange: boolean;
  /** What an account may hold, for Create Token and Create Booking. */
  quotas: Quotas;
  /** The feed's reads and waits (contract section 13.2). */
  feed: ChangeFeed;
  /** Aborted when the process begins to drain: a waiting feed request answers its empty page at once. */
  stopWaiting: AbortSignal;
}

/**
 * The whole chain of a catalogue entry. Each starts by naming the operation, for metrics and the event log, before
 * anything can refuse it; a keyed operation's path version (404) comes before the body is read. A dispatch, once the
 * request is received, hands it to the received chain of the operation its body's event names.
 */
export function chainOf(entry: Operation, steps: OperationSteps): RequestHandler[] {
  switch (entry.kind) {
    case 'token notification':
      return [nameOperation(entry.name), ...steps.receive, ...receivedNotification(entry, steps)];
    case 'event dispatch':
      return [
        nameOperation(entry.name),
        ...steps.receive,
        dispatchOnEvent((body) => parsePayload(tokenEventSchema, body).read_event, notificationTargets(steps)),
      ];
    case 'keyed':
      return [nameOperation(entry.name), supportedVersion, ...steps.receive, ...receivedKeyed(entry, steps)];
    case 'token change dispatch':
      return [
        nameOperation(entry.name),
        supportedVersion,
        ...steps.receive,
        dispatchOnEvent((body) => parsePayload(tokenChangeEventSchema, body).token_event, tokenChangeTargets(steps)),
      ];
    case 'feed':
      // No body: the query and path (400), the share_secret as a bearer token (401), then the page.
      return [
        nameOperation(entry.name),
        ...steps.intake,
        validateQuery(entry.query, entry.pathSchema),
        authenticateBearer(steps.store),
        ...steps.afterAuthentication,
        serveFeed(steps.feed, steps.stopWaiting),
      ];
  }
}

/**
 * A token notification once received, on its own route or POST /v1/events: its schema (400), its account and
 * share_public (401), what follows authentication (429), then its service in one unit of work.
 */
function receivedNotification(entry: TokenNotification, steps: OperationSteps): RequestHandler[] {
  const { now, afterAuthentication, allowKeylessStatusChange } = steps;
  return [
    validate(entry.schema),
    // A keyless request only where the entry allows it: signed with the account's own secret, or allowed by the operator.
    authenticate('share_public', entry.keyless ? (context) => allowKeylessStatusChange || context.signature.signedByAccount : undefined),
    ...afterAuthentication,
    applyInOneUnit(steps, entry.change, (tx, context) =>
      entry.service(tx, context.input.body as z.output<TokenNotification['schema']>, context.account, now()),
    ),
  ];
}

/**
 * An operation keyed by `{randomkey}` once received, on its own route or PATCH on the token path: a body of another
 * operation of the path refused (400), body and path schema (400), account and share_secret (401), what follows
 * authentication (429), then its service in one unit of work, which keeps the answer under the key.
 */
function receivedKeyed(entry: KeyedOperation, steps: OperationSteps): RequestHandler[] {
  const { now, afterAuthentication, quotas } = steps;
  return [
    ...(entry.otherOperation ? [refuseOtherOperation(entry.otherOperation)] : []),
    validate(entry.schema, keyedPathSchema),
    authenticate('share_secret'),
    ...afterAuthentication,
    applyInOneUnit(
      steps,
      entry.change,
      (tx, context, keys) => {
        const { body, path } = context.input as { body: z.output<KeyedOperation['schema']>; path: z.output<typeof keyedPathSchema> };
        return entry.service(tx, {
          partnerId: path.partnerid,
          key: path.randomkey,
          body,
          account: context.account,
          now: now(),
          quotas,
          keys,
        });
      },
      SHOW[entry.answer] as (result: KeyedResults[keyof KeyedResults]) => object,
    ),
  ];
}

/** What a keyed operation's answer carries besides success and message, by its kind of answer. */
const SHOW: { [AnswerKind in keyof KeyedResults]: (result: KeyedResults[AnswerKind]) => object } = {
  token: (token) => ({ token: tokenView(token) }),
  booking: (booking) => ({ booking: bookingView(booking) }),
  movement: tokenMovementView,
};

/**
 * POST /v1/events: every read_event's token notification of the catalogue. token.loaded_created is Loaded's event,
 * so it is Loaded here; only the Unloaded route also takes it for Unloaded, as the published page names it.
 */
function notificationTargets(steps: OperationSteps): ReadonlyMap<string, DispatchTarget> {
  const byEvent = tokenNotificationsByEvent();
  return new Map(
    Object.values(TOKEN_EVENTS).map((event) => {
      const entry = byEvent.get(event);
      if (!entry) throw new Error(`read_event ${event} has no token notification in the catalogue`);
      return [event, { name: entry.name, chain: receivedNotification(entry, steps) }];
    }),
  );
}

/** PATCH on the token path: Modify, Load and Unload Token, by token_event, each as on its own published path. */
function tokenChangeTargets(steps: OperationSteps): ReadonlyMap<string, DispatchTarget> {
  return new Map([...tokenChangesByEvent()].map(([event, entry]) => [event, { name: entry.name, chain: receivedKeyed(entry, steps) }]));
}
