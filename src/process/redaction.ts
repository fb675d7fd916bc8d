/**
 * The one list of query parameters whose values neither a log line (middleware/request-logger.ts) nor a span
 * (process/tracing.ts) carries: any named like a key (share_public among them), a secret, a token, a password, a
 * signature (`sig` too, as OpenTelemetry's own list has it) or an authorization.
 */
const SECRET_PARAMETER = /key|secret|token|public|passw|signature|auth|^sig$/i;

export const REDACTED = '[redacted]';

function parameterName(part: string): string {
  const equals = part.indexOf('=');
  const name = equals === -1 ? part : part.slice(0, equals);
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/** A query string (without its `?`) with the values of secret-like parameters replaced; the rest as it came. */
export function redactedQueryString(query: string): string {
  return query
    .split('&')
    .map((part) =>
      part.includes('=') && SECRET_PARAMETER.test(parameterName(part)) ? `${part.slice(0, part.indexOf('='))}=${REDACTED}` : part,
    )
    .join('&');
}

/** A URL (path and query) with the values of secret-like query parameters replaced. */
export function redactedUrl(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : `${url.slice(0, queryStart + 1)}${redactedQueryString(url.slice(queryStart + 1))}`;
}
