import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { SignatureError } from '../errors';

/** The library's own window; a configured tolerance may only be narrower. */
export const MAX_TOLERANCE_SECONDS = 300;

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

export interface SignatureCheck {
  /** Verifies the Standard Webhooks headers over the raw body; returns the webhook-id or throws a SignatureError. */
  verify(rawBody: Buffer, headers: IncomingHttpHeaders): string;
}

/** Parses WEBHOOK_SECRET: one or more `whsec_…` secrets separated by spaces or commas, so secrets can be rotated. */
export function parseSecrets(value: string): Webhook[] {
  return value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((secret) => new Webhook(secret));
}

/**
 * Verifies with the standardwebhooks package. The timestamp is checked here
 * first, against the configured tolerance, so that "too old" and "too new"
 * get messages of their own; the package then checks the signature.
 */
export function createSignatureCheck(secrets: Webhook[], toleranceSeconds: number, now: () => Date = () => new Date()): SignatureCheck {
  return {
    verify(rawBody, headers) {
      const values = HEADERS.map((name) => headers[name]);
      if (values.some((value) => typeof value !== 'string' || value.length === 0)) {
        throw new SignatureError(
          'Missing webhook signature headers: webhook-id, webhook-timestamp and webhook-signature are required',
          'signature_missing',
        );
      }
      const [id, timestampText] = values as string[];
      // Deliveries are remembered by id: a bounded, printable one.
      if (!/^[\x21-\x7e]{1,256}$/.test(id))
        throw new SignatureError('webhook-id must be 1 to 256 printable ASCII characters', 'signature_invalid');
      if (!/^\d{1,12}$/.test(timestampText)) throw new SignatureError('webhook-timestamp must be Unix seconds', 'signature_invalid');
      const skew = Math.floor(now().getTime() / 1000) - Number(timestampText);
      if (skew > toleranceSeconds) throw new SignatureError('Webhook timestamp is too old', 'signature_too_old');
      if (skew < -toleranceSeconds) throw new SignatureError('Webhook timestamp is too new', 'signature_too_new');
      const verifies = (secret: Webhook) => {
        try {
          secret.verify(rawBody, headers as Record<string, string>, { jsonParse: false });
          return true;
        } catch (error) {
          if (error instanceof WebhookVerificationError) return false;
          throw error;
        }
      };
      if (!secrets.some(verifies)) throw new SignatureError('Invalid webhook signature', 'signature_invalid');
      return id;
    },
  };
}
