/** Who may call what, as the OpenAPI document states it: the signature's and the admin token's schemes, and the keys in the body in prose. */
import type { Json } from './responses';

/**
 * Who may call an operation, as OpenAPI can state it. Partners' keys travel in the JSON body (share_public,
 * share_secret), which no security scheme can express: AUTHENTICATION in info.description and each operation's
 * description say it. What a scheme can express is the Standard Webhooks signature (contract section 10): all three
 * headers together, or none where the contract allows an unsigned request (neither the account nor the service has a
 * signing secret), hence the empty requirement beside them.
 */
export const SIGNED_OR_UNSIGNED = [{ webhookId: [], webhookTimestamp: [], webhookSignature: [] }, {}];
export const ADMIN_BEARER = [{ adminBearer: [] }];
/** The feed: the account's share_secret as a bearer token (contract section 13.2). */
export const ACCOUNT_BEARER = [{ accountBearer: [] }];
/** Stated, not left out: an operation without `security` fails the linter, so none is open by omission. */
export const OPEN: Json[] = [];

export const SECURITY_SCHEMES = {
  webhookId: signatureHeader(
    'webhook-id',
    'The delivery id, 1 to 256 printable ASCII characters. A repeated id with the same body is answered as a replay (Idempotent-Replayed: true); with another body it is a 422.',
  ),
  webhookTimestamp: signatureHeader(
    'webhook-timestamp',
    'Unix seconds when the delivery was signed; at most WEBHOOK_TOLERANCE_SECONDS (300 unless set lower) from the service clock, either way.',
  ),
  webhookSignature: signatureHeader(
    'webhook-signature',
    'One or more space-separated signatures, each v1, a comma, then the base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}" with a signing secret. Computed for each request: not a fixed key.',
  ),
  accountBearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The share_secret of the account the path names (the feed of changes). A missing or wrong secret, an unknown or disabled account are the same 401, with WWW-Authenticate: Bearer realm="changes", counted against the client address.',
  },
  adminBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The ADMIN_TOKEN the service runs with. A missing or wrong token is a 401 with WWW-Authenticate: Bearer realm="admin".',
  },
};

function signatureHeader(name: string, description: string): Json {
  return {
    type: 'apiKey',
    in: 'header',
    name,
    description: `Standard Webhooks, sent with the other two signature headers. ${description} Required when the account named by source_id has signing secrets, or the service runs with WEBHOOK_SECRET; otherwise optional.`,
  };
}

/** How partners authenticate: the keys in the body, which OpenAPI has no scheme for, then the signature. */
export const AUTHENTICATION = `## Authentication

Partners authenticate in the JSON body, with the account named by \`source_id\` and one of its keys; OpenAPI has no security scheme for a key in the body, so it is described here and on each operation:

- token notifications (\`/v1/tokens/...\`, \`/v1/events\`) carry the account's public key in \`share_public\`;
- booking operations (\`/{version}/booking/...\`) and Create Token (\`/{version}/token/...\`) carry the account's secret key in \`share_secret\`.

An unknown \`source_id\` and a wrong key answer the same 401 \`Unauthorized\`, so callers cannot probe which accounts exist. A missing key is a 400 naming the field, as any missing field is, except in a Status Change, where it is the 401 (see below). Keys are never echoed.

The request examples carry the keys of the demo seed (account \`PDR28\`), so "Try it out" works against a service started on it (\`npm start\` without \`SEED_FILE\`). They are public, published with the service: production refuses to start on the demo seed.

A request must also be signed, following Standard Webhooks (the headers \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\`, the security schemes of those operations), when the account has signing secrets of its own (it must sign with one of them) or, for an account without, when the service runs with \`WEBHOOK_SECRET\`. Otherwise a request needs no signature: hence the empty security requirement beside the signature.

A Status Change may leave out \`share_public\` when it is signed with the account's own secret, or when the service runs with \`ALLOW_KEYLESS_STATUS_CHANGE=true\`.

The feed of changes (\`GET /v1/accounts/{source_id}/changes\`) has no body: it takes the account's \`share_secret\` as a bearer token, \`Authorization: Bearer <share_secret>\` (the security scheme accountBearer), and needs no signature.

The admin routes exist only when the service runs with \`ADMIN_TOKEN\`, and take it as a bearer token. Health, readiness and this document are open. Prometheus metrics are not on this port: the service serves \`GET /metrics\` on a listener of its own, \`METRICS_PORT\` (default 9464), for the operator's network.`;

/** The line each partner operation's description ends with. */
export const authenticationNote = (key: 'share_public' | 'share_secret') =>
  `Authentication: \`${key}\` and \`source_id\` in the body; the signature headers when the account or the service signs (see the API's description).`;
