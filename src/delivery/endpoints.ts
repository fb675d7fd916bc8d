import type { ChangeType } from '../store/store';

/**
 * A webhook endpoint as the seed file declares it (contract section 13.3), checked (seed/schema.ts, and against the
 * settings at start): what the delivery engine sends to, through a webhook sink each.
 */
export interface EndpointConfig {
  /** Unique among the seed's endpoints, ENDPOINT_ID_PATTERN: it names the endpoint in positions, routes and metrics. */
  id: string;
  /** https:// (http:// too with DELIVERY_ALLOW_HTTP=true), without user or password. */
  url: string;
  /** The `whsec_…` secrets as the seed writes them: each signs every request, so a rotation overlaps. */
  secrets: string[];
  /** Only these accounts' changes; unset: every account's. */
  sourceIds?: string[];
  /** Only changes of these types; unset: every type. */
  types?: ChangeType[];
}

/**
 * Lower-case letters, digits, `-` and `_`, 1 to 64, starting with a letter or digit: safe as it is in a URL path
 * (/admin/endpoints/{id}), a metric's label and a log line, and never two spellings of one id.
 */
export const ENDPOINT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The NATS relay's sink id (contract section 13.4): reserved, so no endpoint of the seed takes it, with or without
 * NATS_URL; positions, attempts, /admin/endpoints and the metrics name the relay by it.
 */
export const NATS_SINK_ID = 'nats';

/** More than this many endpoints is no deployment's list of systems behind the service; each holds sockets and a loop. */
export const MAX_ENDPOINTS = 100;

/** Each secret signs every request: a handful covers a rotation. */
export const MAX_ENDPOINT_SECRETS = 10;
