import type { RequestHandler } from 'express';
import type { Quotas } from '../services/keyed-requests';
import type { Store } from '../store/store';

/** What every operation router is built from; app.ts makes the shared steps once, so their counters are shared too. */
export interface OperationRouterDeps {
  store: Store;
  now: () => Date;
  /** Receiving the request, in the contract's order before the schema: refuse while draining, limit per address, read the JSON body, verify its signature. */
  receive: RequestHandler[];
  /** Rate limit per account. */
  afterAuthentication: RequestHandler[];
  /** ALLOW_KEYLESS_STATUS_CHANGE: a Status Change without share_public, for an account that exists. */
  allowKeylessStatusChange: boolean;
  /** What an account may hold, for Create Token and Create Booking. */
  quotas: Quotas;
}
