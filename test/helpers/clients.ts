import type { Server } from 'node:http';
import request from 'supertest';
import type { TestApp } from './app';
import { ACME } from './fixtures';
import { bookingPath, tokenPath } from './payloads';

/**
 * One client per operation: each sends its body to the operation's path on the server (or a TestApp's) and
 * returns the supertest request, so a test goes on with `.set(…)`, `.expect(…)` or `await`. Leave the body out to
 * send one yourself (raw text, after a `.set('Content-Type', …)`). The keyed operations take the key, partner and
 * version as bookingPath and tokenPath do.
 */
export type Target = Server | TestApp;
type Body = object | string;

const serverOf = (target: Target): Server => ('store' in target ? target.server : target);

function send(test: request.Test, body: Body | undefined): request.Test {
  return body === undefined ? test : test.send(body);
}

const tokenNotification = (path: string) => (target: Target, body?: Body) => send(request(serverOf(target)).post(path), body);

export const withdraw = tokenNotification('/v1/tokens/withdraw');
export const statusChange = tokenNotification('/v1/tokens/status-change');
export const loaded = tokenNotification('/v1/tokens/loaded');
export const unloaded = tokenNotification('/v1/tokens/unloaded');
export const loadSchedule = tokenNotification('/v1/tokens/load-schedule');
export const expiryDate = tokenNotification('/v1/tokens/expiry-date');
export const availableDate = tokenNotification('/v1/tokens/available-date');
export const refund = tokenNotification('/v1/tokens/refund');
export const events = tokenNotification('/v1/events');

export function createToken(target: Target, body?: Body, key?: string, partnerId?: string, version?: string): request.Test {
  return send(request(serverOf(target)).post(tokenPath(key, partnerId, version)), body);
}

/** PATCH on the token path: Modify, Load or Unload Token by the body's token_event; with `event`, the published form (.../{randomkey}/load). */
export function changeToken(target: Target, body?: Body, key?: string, event?: string, partnerId?: string, version?: string): request.Test {
  return send(request(serverOf(target)).patch(`${tokenPath(key, partnerId, version)}${event === undefined ? '' : `/${event}`}`), body);
}

export function createBooking(target: Target, body?: Body, key?: string, partnerId?: string, version?: string): request.Test {
  return send(request(serverOf(target)).post(bookingPath(key, partnerId, version)), body);
}

export function modifyBooking(target: Target, body?: Body, key?: string, partnerId?: string, version?: string): request.Test {
  return send(request(serverOf(target)).patch(bookingPath(key, partnerId, version)), body);
}

export function cancelBooking(target: Target, body?: Body, key?: string, partnerId?: string, version?: string): request.Test {
  return send(request(serverOf(target)).delete(bookingPath(key, partnerId, version)), body);
}

/** A token notification's client, for a test that runs over several of them. */
export type NotificationClient = (target: Target, body?: Body) => request.Test;

/**
 * GET /v1/accounts/{source_id}/changes (the feed), with the query given (a raw query string as it is) and the
 * account's share_secret as a bearer token: ACME's unless given, none when `secret` is null.
 */
export function changes(
  target: Target,
  query: Record<string, string> | string = {},
  sourceId = ACME.source_id,
  secret: string | null = ACME.share_secret,
): request.Test {
  const test = request(serverOf(target))
    .get(`/v1/accounts/${encodeURIComponent(sourceId)}/changes`)
    .query(query);
  return secret === null ? test : test.set('Authorization', `Bearer ${secret}`);
}
