import { z } from 'zod';

/** The read_event of every token notification. */
export const TOKEN_EVENTS = {
  statusChanged: 'token.status_changed',
  withdrawn: 'token.withdrawn_created',
  loaded: 'token.loaded_created',
  unloaded: 'token.unloaded_created',
  loadSchedule: 'token.load_schedule',
  expiryUpdated: 'token.expiry_updated',
  availableUpdated: 'token.available_updated',
  refund: 'token.refund_available',
} as const;

export type TokenEvent = (typeof TOKEN_EVENTS)[keyof typeof TOKEN_EVENTS];

/** Each read_event's own route, so a body sent to another route is told where it belongs. */
export const ROUTE_OF_EVENT: Readonly<Record<TokenEvent, string>> = {
  [TOKEN_EVENTS.statusChanged]: '/v1/tokens/status-change',
  [TOKEN_EVENTS.withdrawn]: '/v1/tokens/withdraw',
  [TOKEN_EVENTS.loaded]: '/v1/tokens/loaded',
  [TOKEN_EVENTS.unloaded]: '/v1/tokens/unloaded',
  [TOKEN_EVENTS.loadSchedule]: '/v1/tokens/load-schedule',
  [TOKEN_EVENTS.expiryUpdated]: '/v1/tokens/expiry-date',
  [TOKEN_EVENTS.availableUpdated]: '/v1/tokens/available-date',
  [TOKEN_EVENTS.refund]: '/v1/tokens/refund',
};

const EVENTS_ROUTE = '/v1/events';

function listed(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(' or ');
}

function isTokenEvent(value: unknown): value is TokenEvent {
  return typeof value === 'string' && Object.hasOwn(ROUTE_OF_EVENT, value);
}

/** The read_event a route takes; another notification's event is told which route takes it. */
export function readEvent<const Names extends readonly [TokenEvent, ...TokenEvent[]]>(names: Names) {
  return z.enum(names, {
    error: ({ input }) => {
      if (input === undefined) return 'is required';
      if (isTokenEvent(input)) {
        return `is "${input}", which POST ${ROUTE_OF_EVENT[input]} (or POST ${EVENTS_ROUTE}) takes; this route takes ${listed(names)}`;
      }
      return `must be ${listed(names)}`;
    },
  });
}

const KNOWN_EVENTS = Object.values(TOKEN_EVENTS) as [TokenEvent, ...TokenEvent[]];

/** `POST /v1/events` reads only `read_event` to pick the operation; the operation's schema does the rest. */
export const tokenEventSchema = z.object({
  read_event: z.enum(KNOWN_EVENTS, {
    error: ({ input }) => (input === undefined ? 'is required' : `must be one of ${KNOWN_EVENTS.map((name) => `"${name}"`).join(', ')}`),
  }),
});
