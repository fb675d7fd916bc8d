import { BlockList, isIP } from 'node:net';
import bytes from 'bytes';
import dotenv from 'dotenv';
import type { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { MAX_TOLERANCE_SECONDS, parseSecrets } from '../middleware/webhooks';
import { isPublishedKeyText, isPublishedSigningSecret } from './published-secrets';
import { hostname } from 'node:os';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** proxy-addr's names for the reserved ranges, which Express's trust proxy takes beside addresses and subnets. */
const PROXY_RANGE_NAMES: ReadonlySet<string> = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * The widest subnet taken, by IP version: a wider one trusts a good part of the Internet (0.0.0.0/1 with
 * 128.0.0.0/1 trusts all of it, as `true` would), so its clients could choose their address. The private ranges
 * fit (10.0.0.0/8; IPv6's unique local fc00::/7).
 */
const WIDEST_PREFIX: Record<number, number> = { 4: 8, 6: 7 };
/**
 * IPv4 written in IPv6 (::ffff:0:0/96): Express's proxy-addr matches an IPv4 peer against an IPv6 subnet only when the
 * subnet's address is in this range and its prefix is 96 or more, so ::ffff:0:0/96 trusts all of IPv4 and a prefix
 * P there trusts an IPv4 /(P - 96). It matches no IPv4 peer against IPv4-compatible ::/96 or 6to4 2002::/16.
 */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');
const IPV4_MAPPED_PREFIX = 96;

/** More proxies in a row than this is no deployment: a count past the real chain lets clients name their address. */
const MAX_PROXY_HOPS = 10;

/** An address, a subnet (address/prefix) or a named range, as Express's trust proxy takes them. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (version === 4 ? 32 : 128)) return false;
  if (version === 6 && IPV4_MAPPED.check(address, 'ipv6')) return Number(prefix) - IPV4_MAPPED_PREFIX >= WIDEST_PREFIX[4];
  return Number(prefix) >= WIDEST_PREFIX[version];
}

/** One message for any value out of the range, a sign or a fraction included: `-5` is not "not a whole number". */
function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `must be a whole number, ${min} or more` : `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, range)
    .transform(Number)
    .refine((value) => value >= min && value <= max, range);
}

/** The longest wait a Node timer keeps (2^31 - 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** More retry steps than this is a typo, not a schedule: seven are the contract's default. */
const MAX_RETRY_STEPS = 100;

/**
 * DELIVERY_RETRY_SCHEDULE (contract section 13.3): the waits before each retry, in milliseconds separated by commas,
 * each a whole number from 1 to MAX_TIMER_MS; strictly so, since a lax parse (spaces, units, `5s`) would guess.
 */
const retrySchedule = z.string().transform((value, ctx) => {
  const steps = /^\d+(,\d+)*$/.test(value) ? value.split(',').map(Number) : [];
  if (steps.length > 0 && steps.length <= MAX_RETRY_STEPS && steps.every((step) => step >= 1 && step <= MAX_TIMER_MS)) return steps;
  ctx.issues.push({
    code: 'custom',
    input: value,
    message: `must be 1 to ${MAX_RETRY_STEPS} waits in milliseconds (whole numbers from 1 to ${MAX_TIMER_MS}) separated by commas, without spaces, such as 5000,300000,1800000`,
  });
  return z.NEVER;
});

/** The contract's retries: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. */
const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** OTEL_TRACES_SAMPLER's values (OpenTelemetry's names); each stands for a ratio of the traces started here. */
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * Contract section 12: how many traces are exported is the operator's decision. OpenTelemetry's own settings name the
 * ratio; a caller's sampled flag counts only with TRACES_TRUST_CALLER_SAMPLING=true (process/tracing.ts).
 */
const traceSamplingSchema = z.object({
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'must be a ratio from 0 to 1, such as 0.25')
    .transform(Number)
    .default(1),
  TRACES_TRUST_CALLER_SAMPLING: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
});

export interface TraceSampling {
  /** The share of traces exported, from 0 to 1, whatever a caller's traceparent says. */
  ratio: number;
  /** TRACES_TRUST_CALLER_SAMPLING: a caller's sampled flag decides instead (an upstream the operator runs). */
  trustCaller: boolean;
}

/** Empty values count as unset, as for every setting. */
function presentIn(environment: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}

/** The operator's sampling; undefined when a setting is bad (loadConfig names it). */
export function traceSampling(environment: NodeJS.ProcessEnv): TraceSampling | undefined {
  const result = traceSamplingSchema.safeParse(presentIn(environment));
  if (!result.success) return undefined;
  const { OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: ratio, TRACES_TRUST_CALLER_SAMPLING: trustCaller } = result.data;
  return { ratio: sampler.endsWith('traceidratio') ? ratio : sampler.endsWith('always_off') ? 0 : 1, trustCaller: trustCaller === 'true' };
}

/** INSTANCE_ID, default the host name (contract section 12): the log lines and the traces' resource name the same instance. */
export function instanceIdIn(environment: NodeJS.ProcessEnv): string {
  return presentIn(environment).INSTANCE_ID ?? hostname();
}

/** What NATS_URL gives the client: the servers, whether TLS is required, and the credentials written in the URLs. */
function natsConnection(value: string, ctx: z.RefinementCtx): NatsConnectionConfig {
  const refuse = (message: string) => {
    ctx.issues.push({ code: 'custom', input: value, message });
    return z.NEVER;
  };
  const urls: URL[] = [];
  for (const entry of value.split(',').map((text) => text.trim())) {
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    if (
      !url ||
      !['nats:', 'tls:'].includes(url.protocol) ||
      url.hostname === '' ||
      !['', '/'].includes(url.pathname) ||
      url.search ||
      url.hash
    )
      return refuse('must be one or more nats:// or tls:// URLs (nats://host:4222), separated by commas');
    urls.push(url);
  }
  const [first] = urls;
  // One client, one identity: servers of a cluster that asked for different credentials would be a typo.
  if (urls.some((url) => url.protocol !== first.protocol || url.username !== first.username || url.password !== first.password))
    return refuse('must give every server the same scheme and the same credentials');
  const username = decodeURIComponent(first.username);
  const password = decodeURIComponent(first.password);
  return {
    servers: urls.map((url) => url.host),
    tls: first.protocol === 'tls:',
    // nats://user:password@host is a user and password; nats://secret@host, a token (as the NATS CLI reads them).
    credentials: password ? { user: username, pass: password } : username ? { token: username } : {},
  };
}

/** Every setting the service reads, documented in .env.example. */
const environmentSchema = z.object({
  PORT: wholeNumber(0, 65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  // Contract section 8: /metrics on a listener of its own, never on the partners' port. 0: a port the kernel picks.
  METRICS_PORT: wholeNumber(0, 65535).default(9464),
  METRICS_HOST: z.string().optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // Contract section 12: the instance every log line names; unset, the host name (a container's id under Docker).
  INSTANCE_ID: z.string().max(128, 'must be at most 128 characters').optional(),
  SEED_FILE: z.string().optional(),
  // Exactly one of the three: ` production` or `prod` taken as "not production" served the demo seed with a warning.
  NODE_ENV: z.enum(['production', 'development', 'test'], { error: 'must be production, development or test' }).optional(),
  BODY_LIMIT: z
    .string()
    .default('32kb')
    .transform((value, ctx) => {
      const limit = bytes.parse(value);
      if (limit === null || !Number.isSafeInteger(limit) || limit < 1) {
        ctx.issues.push({ code: 'custom', message: 'must be a size such as 32kb or 65536', input: value });
        return z.NEVER;
      }
      return limit;
    }),
  RATE_LIMIT_PER_MINUTE: wholeNumber(0).default(6000),
  RATE_LIMIT_PER_ADDRESS_PER_MINUTE: wholeNumber(0).default(600),
  RATE_LIMIT_DOCUMENTS_PER_ADDRESS_PER_MINUTE: wholeNumber(0).default(60),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// connection URL')
    .optional(),
  REDIS_KEY_PREFIX: z.string().default('receiver:rate-limit:'),
  // Contract section 11: `true` would trust every X-Forwarded-For entry, so any client could choose its address
  // (and so its rate-limit bucket); only a hop count or the proxies' own addresses say where the client is.
  TRUST_PROXY: z
    .string()
    .transform((value, ctx): false | number | string => {
      if (value === 'false') return false;
      if (/^\d+$/.test(value) && Number(value) <= MAX_PROXY_HOPS) return Number(value);
      const entries = value.split(',').map((entry) => entry.trim());
      if (value !== 'true' && entries.every(isProxyAddress)) return entries.join(',');
      ctx.issues.push({
        code: 'custom',
        input: value,
        message:
          value === 'true'
            ? 'true is refused: it lets any client choose its address for the rate limits; set the number of proxies in front of the service, or their addresses or subnets'
            : `must be a number of proxies (0 to ${MAX_PROXY_HOPS}), or addresses and subnets of your proxies (IPv4 /8 or narrower, IPv6 /7 or narrower, IPv4-mapped ::ffff:a.b.c.d /104 or narrower) separated by commas (loopback, linklocal and uniquelocal name their ranges)`,
      });
      return z.NEVER;
    })
    .optional(),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(1).default(10000),
  // Contract section 8: after a signal, readiness is off but the service serves on this long before it drains, so
  // a load balancer that learns of the stop late (Kubernetes' endpoints) sends nothing into a closed port.
  SHUTDOWN_DELAY_MS: wholeNumber(0).default(0),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// connection URL')
    .optional(),
  // Contract section 12: through a transaction-mode pooler (PgBouncer) nothing may rely on a session.
  DATABASE_POOLER: z.enum(['none', 'transaction'], { error: 'must be none or transaction' }).default('none'),
  DATABASE_DIRECT_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// connection URL')
    .optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(1).default(5000),
  DATABASE_POOL_SIZE: wholeNumber(1, 1000).default(10),
  DATABASE_CONNECT_TIMEOUT_MS: wholeNumber(1).default(2000),
  // false: migrations are `npm run migrate`'s (a Kubernetes Job), so the service's role needs no DDL right.
  MIGRATE_ON_START: z.enum(['true', 'false'], { error: 'must be true or false' }).default('true'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  EVENT_LOG_SIZE: wholeNumber(1, 1_000_000).default(1000),
  WEBHOOK_SECRET: z
    .string()
    .transform((value, ctx) => {
      try {
        const secrets = parseSecrets(value);
        if (secrets.length > 0) return secrets;
      } catch {
        // reported below
      }
      ctx.issues.push({ code: 'custom', message: 'must be one or more whsec_… base64 secrets separated by spaces', input: value });
      return z.NEVER;
    })
    .optional(),
  WEBHOOK_TOLERANCE_SECONDS: wholeNumber(1, MAX_TOLERANCE_SECONDS).default(MAX_TOLERANCE_SECONDS),
  ALLOW_KEYLESS_STATUS_CHANGE: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  MAX_CONNECTIONS: wholeNumber(0).default(4096),
  MAX_CONNECTIONS_PER_ADDRESS: wholeNumber(0).default(256),
  WRITE_TIMEOUT_MS: wholeNumber(1).default(30000),
  MAX_TOKENS_PER_ACCOUNT: wholeNumber(0).default(1_000_000),
  MAX_BOOKINGS_PER_ACCOUNT: wholeNumber(0).default(1_000_000),
  MAX_KEYS_PER_ACCOUNT: wholeNumber(0).default(100_000),
  CHANGE_RETENTION_DAYS: wholeNumber(1).default(30),
  MEMORY_CHANGES_PER_ACCOUNT: wholeNumber(1).default(100_000),
  // Contract section 13.2: feed requests of one account waiting for changes at once, per instance; at least 1.
  MAX_WAITING_FEEDS_PER_ACCOUNT: wholeNumber(1).default(4),
  // Contract section 13.4: unset, nothing of NATS is loaded and no change is published.
  NATS_URL: z.string().transform(natsConnection).optional(),
  // JetStream's stream names: no dots, wildcards, spaces or path separators; NATS advises at most 32 characters.
  NATS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, _ or -')
    .default('RECEIVER_CHANGES'),
  NATS_PUBLISH_TIMEOUT_MS: wholeNumber(1).default(5000),
  // Contract section 13.3, webhooks out: how long one attempt may take, whether http:// endpoints are allowed, attempts
  // in flight per endpoint, the retries' waits, and how long an instance holds an endpoint after it last said so.
  DELIVERY_TIMEOUT_MS: wholeNumber(1, MAX_TIMER_MS).default(10000),
  DELIVERY_ALLOW_HTTP: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  DELIVERY_CONCURRENCY: wholeNumber(1, 1000).default(8),
  DELIVERY_RETRY_SCHEDULE: retrySchedule.default([...DEFAULT_RETRY_SCHEDULE_MS]),
  DELIVERY_LEASE_MS: wholeNumber(1, MAX_TIMER_MS).default(30000),
  ...traceSamplingSchema.shape,
});

/** Every setting's name: what a deployment sets must be one of them (the Kubernetes manifests' test checks it). */
export const SETTING_NAMES: readonly string[] = Object.keys(environmentSchema.shape);

export interface Config {
  port: number;
  host: string;
  /** Where /metrics is served: its own listener (contract section 8). */
  metrics: { port: number; host: string };
  logLevel: (typeof LOG_LEVELS)[number];
  /** INSTANCE_ID, default the host name: on every log line. */
  instanceId: string;
  /** Unset: the demo seed shipped in the repository, except in production (see seedFileToServe). */
  seedFile: string | undefined;
  /** NODE_ENV=production. */
  production: boolean;
  bodyLimitBytes: number;
  /** Requests per authenticated account; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Failed requests per client address, counted before the body is read; 0 turns the limit off. */
  rateLimitPerAddressPerMinute: number;
  /** Every request for the documents (/openapi.json, /docs and its files) per client address; 0 turns the limit off. */
  rateLimitDocumentsPerAddressPerMinute: number;
  /** Unset: each instance counts its rate limits alone. */
  redis: { url: string; keyPrefix: string } | undefined;
  /** Express's "trust proxy": which hops of X-Forwarded-For name the client. Unset: the peer's address. */
  trustProxy: false | number | string;
  shutdownTimeoutMs: number;
  /** How long the service serves on, readiness off, after a signal before it drains (SHUTDOWN_DELAY_MS). */
  shutdownDelayMs: number;
  /** Unset: the memory store. */
  database: DatabaseConfig | undefined;
  /** Unset: the /admin routes do not exist. */
  adminToken: string | undefined;
  /** Operation requests kept for GET /admin/events. */
  eventLogSize: number;
  /** Unset: notifications need no signature, but from accounts with signing secrets of their own. */
  webhook: WebhookConfig | undefined;
  /** How far webhook-timestamp may be from now, for every signature (the upstream sender's and the accounts'). */
  signatureToleranceSeconds: number;
  /** A Status Change without share_public, unsigned by the account, for an account that exists. */
  allowKeylessStatusChange: boolean;
  /**
   * Open connections per instance and per client address (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS; 0 turns either
   * off), and how long an answer may wait for its client to take it (WRITE_TIMEOUT_MS).
   */
  connections: { maxConnections: number; maxConnectionsPerAddress: number; writeTimeout: number };
  /** What one account may hold (MAX_TOKENS_PER_ACCOUNT, MAX_BOOKINGS_PER_ACCOUNT, MAX_KEYS_PER_ACCOUNT); 0 turns a quota off. */
  quotas: { tokensPerAccount: number; bookingsPerAccount: number; keysPerAccount: number };
  /**
   * Changes (contract section 13.1): kept CHANGE_RETENTION_DAYS days, and on the memory store at most
   * MEMORY_CHANGES_PER_ACCOUNT of each account's newest.
   */
  changes: { retentionDays: number; memoryPerAccount: number };
  /** Feed requests of one account that may wait for changes at once on this instance (contract section 13.2). */
  maxWaitingFeedsPerAccount: number;
  /** NATS_URL: the JetStream relay (contract section 13.4); unset, there is none. */
  nats: NatsConfig | undefined;
  /** Webhooks out (contract section 13.3); the endpoints themselves are the seed's. */
  delivery: DeliveryConfig;
}

export interface NatsConnectionConfig {
  /** host:port of each server NATS_URL lists. */
  servers: string[];
  /** tls:// URLs: the connection must be TLS (a nats:// one still upgrades when the server offers it). */
  tls: boolean;
  /** From the URLs' user information: a user and password, a token, or nothing. */
  credentials: { user?: string; pass?: string; token?: string };
}

export interface NatsConfig extends NatsConnectionConfig {
  /** NATS_STREAM: the stream that captures `receiver.changes.>`, created when missing. */
  stream: string;
  /** NATS_PUBLISH_TIMEOUT_MS: how long one publish waits for JetStream's acknowledgement before it counts as failed. */
  publishTimeoutMs: number;
}

export interface DeliveryConfig {
  /** DELIVERY_TIMEOUT_MS: one attempt, from connecting to the answer's status and the part of its body read. */
  timeoutMs: number;
  /** DELIVERY_ALLOW_HTTP: endpoints may be http:// too, not only https://. */
  allowHttp: boolean;
  /** DELIVERY_CONCURRENCY: attempts in flight per endpoint. */
  concurrency: number;
  /** DELIVERY_RETRY_SCHEDULE: the wait before each retry (index 0: the first); past the last, the endpoint is disabled. */
  retryScheduleMs: readonly number[];
  /** DELIVERY_LEASE_MS: how long an instance holds an endpoint without renewing; past it another takes over. */
  leaseMs: number;
}

export interface WebhookConfig {
  /** Every secret currently accepted (more than one while rotating). */
  secrets: Webhook[];
}

export interface DatabaseConfig {
  url: string;
  /** DATABASE_POOLER=transaction: DATABASE_URL is a transaction-mode pooler (contract section 12). */
  pooler: 'none' | 'transaction';
  /** A session of its own past the pooler, for LISTEN; unset behind a pooler, accounts are re-read every 10 s. */
  directUrl: string | undefined;
  statementTimeoutMs: number;
  poolSize: number;
  connectTimeoutMs: number;
  /** MIGRATE_ON_START: apply pending migrations at start; false: refuse to start on a schema missing any. */
  migrateOnStart: boolean;
}

/** Settings the service cannot start with: each problem names its setting, and goes on a log line of its own. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.problems = problems.map((problem) => `Invalid configuration: ${problem}`);
  }
}

/**
 * Published values compared as keys, not spellings: WEBHOOK_SECRET's secrets (split as parseSecrets splits them) by
 * the key each stands for, ADMIN_TOKEN's text trimmed and case-folded.
 */
const PUBLISHED_IN_SETTING = {
  ADMIN_TOKEN: isPublishedKeyText,
  WEBHOOK_SECRET: (value: string) =>
    value
      .split(/[\s,]+/)
      .filter(Boolean)
      .some(isPublishedSigningSecret),
} as const;

function refusePublishedSecrets(present: Record<string, string | undefined>): void {
  for (const [name, isPublished] of Object.entries(PUBLISHED_IN_SETTING)) {
    const value = present[name];
    if (value !== undefined && isPublished(value))
      throw new ConfigError([
        `${name} is a value published in this repository's documentation; NODE_ENV=production needs a secret of your own`,
      ]);
  }
}

/** Validates the environment; the error names every bad variable. Empty values count as unset. */
export function loadConfig(environment: NodeJS.ProcessEnv): Config {
  const present = presentIn(environment);
  const result = environmentSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(problems);
  }
  const settings = result.data;
  const production = settings.NODE_ENV === 'production';
  if (production) refusePublishedSecrets(present);
  return Object.freeze({
    port: settings.PORT,
    host: settings.HOST,
    metrics: { port: settings.METRICS_PORT, host: settings.METRICS_HOST ?? settings.HOST },
    logLevel: settings.LOG_LEVEL,
    instanceId: settings.INSTANCE_ID ?? hostname(),
    seedFile: settings.SEED_FILE,
    production,
    bodyLimitBytes: settings.BODY_LIMIT,
    rateLimitPerMinute: settings.RATE_LIMIT_PER_MINUTE,
    rateLimitPerAddressPerMinute: settings.RATE_LIMIT_PER_ADDRESS_PER_MINUTE,
    rateLimitDocumentsPerAddressPerMinute: settings.RATE_LIMIT_DOCUMENTS_PER_ADDRESS_PER_MINUTE,
    redis: settings.REDIS_URL ? { url: settings.REDIS_URL, keyPrefix: settings.REDIS_KEY_PREFIX } : undefined,
    trustProxy: settings.TRUST_PROXY ?? false,
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    shutdownDelayMs: settings.SHUTDOWN_DELAY_MS,
    database: settings.DATABASE_URL
      ? {
          url: settings.DATABASE_URL,
          pooler: settings.DATABASE_POOLER,
          directUrl: settings.DATABASE_DIRECT_URL,
          statementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS,
          poolSize: settings.DATABASE_POOL_SIZE,
          connectTimeoutMs: settings.DATABASE_CONNECT_TIMEOUT_MS,
          migrateOnStart: settings.MIGRATE_ON_START === 'true',
        }
      : undefined,
    adminToken: settings.ADMIN_TOKEN,
    eventLogSize: settings.EVENT_LOG_SIZE,
    webhook: settings.WEBHOOK_SECRET ? { secrets: settings.WEBHOOK_SECRET } : undefined,
    signatureToleranceSeconds: settings.WEBHOOK_TOLERANCE_SECONDS,
    allowKeylessStatusChange: settings.ALLOW_KEYLESS_STATUS_CHANGE === 'true',
    connections: {
      maxConnections: settings.MAX_CONNECTIONS,
      maxConnectionsPerAddress: settings.MAX_CONNECTIONS_PER_ADDRESS,
      writeTimeout: settings.WRITE_TIMEOUT_MS,
    },
    quotas: {
      tokensPerAccount: settings.MAX_TOKENS_PER_ACCOUNT,
      bookingsPerAccount: settings.MAX_BOOKINGS_PER_ACCOUNT,
      keysPerAccount: settings.MAX_KEYS_PER_ACCOUNT,
    },
    changes: { retentionDays: settings.CHANGE_RETENTION_DAYS, memoryPerAccount: settings.MEMORY_CHANGES_PER_ACCOUNT },
    maxWaitingFeedsPerAccount: settings.MAX_WAITING_FEEDS_PER_ACCOUNT,
    nats: settings.NATS_URL && { ...settings.NATS_URL, stream: settings.NATS_STREAM, publishTimeoutMs: settings.NATS_PUBLISH_TIMEOUT_MS },
    delivery: {
      timeoutMs: settings.DELIVERY_TIMEOUT_MS,
      allowHttp: settings.DELIVERY_ALLOW_HTTP === 'true',
      concurrency: settings.DELIVERY_CONCURRENCY,
      retryScheduleMs: settings.DELIVERY_RETRY_SCHEDULE,
      leaseMs: settings.DELIVERY_LEASE_MS,
    },
  });
}

/** Reads `.env` (when present) into process.env without overriding what the environment already sets. */
export function loadEnvFile(): void {
  dotenv.config({ quiet: true });
}
