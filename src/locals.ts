import type { Account } from './store/store';

/**
 * What one request carries between the steps that serve it, on Express's own
 * per-request `res.locals`: set by the intake and the operation's chain, read
 * by the handler, the request log, the metrics and the event log.
 */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The operation being served, for metrics and the event log. */
      operation?: string;
      /** The raw body, for the signature check. */
      rawBody?: Buffer;
      /** The parsed JSON body, for its identifying fields: never logged whole. */
      body?: unknown;
      /** The webhook-id of a signed notification, once its signature has been verified. */
      webhookId?: string;
      /** Signed with the named account's own signing secret (not the upstream sender's). */
      signedByAccount?: boolean;
      /** The account the body names, as the signature check looked it up; authenticate reuses it. */
      namedAccount?: { sourceId: string; account: Account | undefined };
      /** The caller, once authenticated. */
      account?: Account;
      /** Answered 200 as a repeat of an applied request: nothing was applied again. */
      replayed?: boolean;
      /** Why the request was refused, as a stable code. */
      errorReason?: string;
    }
  }
}

export {};
