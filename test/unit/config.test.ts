import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/process/config';
import { PUBLISHED_SECRETS_FILE, renderPublishedSecrets } from '../../src/cli/published-secrets';
import { PUBLISHED_SECRETS } from '../../src/process/published-secrets';

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '0.0.0.0',
      metrics: { port: 9464, host: '0.0.0.0' },
      logLevel: 'info',
      instanceId: hostname(),
      seedFile: undefined,
      bodyLimitBytes: 32 * 1024,
      rateLimitPerMinute: 6000,
      rateLimitPerAddressPerMinute: 600,
      rateLimitDocumentsPerAddressPerMinute: 60,
      production: false,
      redis: undefined,
      trustProxy: false,
      signatureToleranceSeconds: 300,
      allowKeylessStatusChange: false,
      shutdownTimeoutMs: 10000,
      shutdownDelayMs: 0,
      database: undefined,
      adminToken: undefined,
      eventLogSize: 1000,
      webhook: undefined,
      quotas: { tokensPerAccount: 1_000_000, bookingsPerAccount: 1_000_000, keysPerAccount: 100_000 },
      changes: { retentionDays: 30, memoryPerAccount: 100_000 },
      maxWaitingFeedsPerAccount: 4,
      connections: { maxConnections: 4096, maxConnectionsPerAddress: 256, writeTimeout: 30000 },
      nats: undefined,
      delivery: {
        timeoutMs: 10000,
        allowHttp: false,
        concurrency: 8,
        retryScheduleMs: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
        leaseMs: 30000,
      },
    });
  });

  it('reads every setting', () => {
    expect(
      loadConfig({
        PORT: '8080',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        SEED_FILE: '/data/seed.json',
        BODY_LIMIT: '1mb',
        RATE_LIMIT_PER_MINUTE: '0',
        SHUTDOWN_TIMEOUT_MS: '2500',
        SHUTDOWN_DELAY_MS: '5000',
        DATABASE_URL: 'postgres://receiver@db:5432/receiver',
        DATABASE_POOLER: 'transaction',
        DATABASE_DIRECT_URL: 'postgres://receiver@db-direct:5432/receiver',
        DATABASE_STATEMENT_TIMEOUT_MS: '800',
        DATABASE_POOL_SIZE: '4',
        DATABASE_CONNECT_TIMEOUT_MS: '1500',
        MIGRATE_ON_START: 'false',
        ADMIN_TOKEN: 'admin-token-0123456789',
        EVENT_LOG_SIZE: '50',
        MAX_TOKENS_PER_ACCOUNT: '0',
        MAX_BOOKINGS_PER_ACCOUNT: '250',
        MAX_KEYS_PER_ACCOUNT: '5000',
        CHANGE_RETENTION_DAYS: '7',
        MEMORY_CHANGES_PER_ACCOUNT: '1000',
        MAX_WAITING_FEEDS_PER_ACCOUNT: '2',
        MAX_CONNECTIONS: '100',
        MAX_CONNECTIONS_PER_ADDRESS: '0',
        WRITE_TIMEOUT_MS: '5000',
        DELIVERY_TIMEOUT_MS: '2500',
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_CONCURRENCY: '2',
        DELIVERY_RETRY_SCHEDULE: '1000,60000',
        DELIVERY_LEASE_MS: '15000',
      }),
    ).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'warn',
      seedFile: '/data/seed.json',
      bodyLimitBytes: 1024 * 1024,
      rateLimitPerMinute: 0,
      shutdownTimeoutMs: 2500,
      shutdownDelayMs: 5000,
      database: {
        url: 'postgres://receiver@db:5432/receiver',
        pooler: 'transaction',
        directUrl: 'postgres://receiver@db-direct:5432/receiver',
        statementTimeoutMs: 800,
        poolSize: 4,
        connectTimeoutMs: 1500,
        migrateOnStart: false,
      },
      adminToken: 'admin-token-0123456789',
      eventLogSize: 50,
      quotas: { tokensPerAccount: 0, bookingsPerAccount: 250, keysPerAccount: 5000 },
      changes: { retentionDays: 7, memoryPerAccount: 1000 },
      maxWaitingFeedsPerAccount: 2,
      connections: { maxConnections: 100, maxConnectionsPerAddress: 0, writeTimeout: 5000 },
      delivery: { timeoutMs: 2500, allowHttp: true, concurrency: 2, retryScheduleMs: [1000, 60000], leaseMs: 15000 },
    });
  });

  it('reads one or more webhook secrets and the tolerance', () => {
    const secret = (text: string) => `whsec_${Buffer.from(text).toString('base64')}`;
    const config = loadConfig({
      WEBHOOK_SECRET: `${secret('first-secret-0123456789')}, ${secret('second-secret-0123456789')}`,
      WEBHOOK_TOLERANCE_SECONDS: '60',
    });
    expect(config.webhook?.secrets).toHaveLength(2);
    expect(config.signatureToleranceSeconds).toBe(60);
    expect(loadConfig({ WEBHOOK_SECRET: secret('only-secret-0123456789') }).signatureToleranceSeconds).toBe(300);
  });

  it('never echoes a bad webhook secret in its message', () => {
    expect(() => loadConfig({ WEBHOOK_SECRET: 'whsec_!!!not-base64!!!' })).toThrow(
      'WEBHOOK_SECRET must be one or more whsec_… base64 secrets separated by spaces',
    );
    expect(() => loadConfig({ WEBHOOK_SECRET: 'whsec_!!!not-base64!!!' })).not.toThrow(/not-base64/);
  });

  it.each([
    ['2', 2],
    ['false', false],
    ['10.0.0.1', '10.0.0.1'],
    ['10.0.0.0/8, 192.168.1.1', '10.0.0.0/8,192.168.1.1'],
    ['loopback,fd00::/8', 'loopback,fd00::/8'],
    // An IPv4 /8 as an IPv4-mapped subnet; proxy-addr matches no IPv4 peer against IPv4-compatible ::/96 or 6to4 2002::/16.
    ['::ffff:10.0.0.0/104', '::ffff:10.0.0.0/104'],
    ['::/96,2002::/16', '::/96,2002::/16'],
  ])("takes TRUST_PROXY = %p as a hop count or the proxies' addresses and subnets", (value, trustProxy) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(trustProxy);
  });

  it('reads the NATS relay: servers, TLS and the credentials written in NATS_URL, the stream and the publish timeout', () => {
    expect(loadConfig({ NATS_URL: 'nats://nats:4222' }).nats).toEqual({
      servers: ['nats:4222'],
      tls: false,
      credentials: {},
      stream: 'RECEIVER_CHANGES',
      publishTimeoutMs: 5000,
    });
    expect(
      loadConfig({
        NATS_URL: 'tls://relay:p%40ss@nats-1:4222, tls://relay:p%40ss@[fd00::2]',
        NATS_STREAM: 'CHANGES_EU',
        NATS_PUBLISH_TIMEOUT_MS: '2000',
      }).nats,
    ).toEqual({
      servers: ['nats-1:4222', '[fd00::2]'],
      tls: true,
      credentials: { user: 'relay', pass: 'p@ss' },
      stream: 'CHANGES_EU',
      publishTimeoutMs: 2000,
    });
    expect(loadConfig({ NATS_URL: 'nats://s3cr3t-token@nats' }).nats?.credentials).toEqual({ token: 's3cr3t-token' });
  });

  it.each([
    ['http://nats:4222', 'NATS_URL must be one or more nats:// or tls:// URLs'],
    ['nats:4222', 'NATS_URL must be one or more nats:// or tls:// URLs'],
    ['nats://nats:4222/path', 'NATS_URL must be one or more nats:// or tls:// URLs'],
    ['nats://a:secret-1@n1,nats://a:secret-2@n2', 'NATS_URL must give every server the same scheme and the same credentials'],
    ['nats://n1,tls://n2', 'NATS_URL must give every server the same scheme and the same credentials'],
  ])('refuses NATS_URL = %p, never echoing it', (value, message) => {
    expect(() => loadConfig({ NATS_URL: value })).toThrow(message);
    expect(() => loadConfig({ NATS_URL: value })).not.toThrow(value);
    expect(() => loadConfig({ NATS_URL: value })).not.toThrow(/secret/);
  });

  it('refuses a NATS_STREAM JetStream would not take as a name', () => {
    expect(() => loadConfig({ NATS_URL: 'nats://nats', NATS_STREAM: 'receiver.changes' })).toThrow(
      'NATS_STREAM must be 1 to 32 letters, digits, _ or -',
    );
  });

  it('serves metrics on METRICS_PORT, on METRICS_HOST or else HOST', () => {
    expect(loadConfig({ HOST: '127.0.0.1', METRICS_PORT: '0' }).metrics).toEqual({ port: 0, host: '127.0.0.1' });
    expect(loadConfig({ HOST: '127.0.0.1', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ port: 9464, host: '10.0.0.5' });
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' }).port).toBe(3000);
  });

  it('refuses a DELIVERY_RETRY_SCHEDULE of more than 100 steps, and takes one of 100', () => {
    const steps = (count: number) => Array<string>(count).fill('1000').join(',');
    expect(() => loadConfig({ DELIVERY_RETRY_SCHEDULE: steps(101) })).toThrow('DELIVERY_RETRY_SCHEDULE must be 1 to 100 waits');
    expect(loadConfig({ DELIVERY_RETRY_SCHEDULE: steps(100) }).delivery.retryScheduleMs).toHaveLength(100);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it.each([
    ['PORT', 'eighty', 'PORT must be a whole number'],
    ['PORT', '70000', 'PORT must be a whole number from 0 to 65535'],
    ['METRICS_PORT', '65536', 'METRICS_PORT must be a whole number from 0 to 65535'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL'],
    ['BODY_LIMIT', 'huge', 'BODY_LIMIT must be a size such as 32kb or 65536'],
    ['BODY_LIMIT', '0', 'BODY_LIMIT must be a size'],
    ['RATE_LIMIT_PER_MINUTE', '-5', 'RATE_LIMIT_PER_MINUTE must be a whole number, 0 or more'],
    ['SHUTDOWN_TIMEOUT_MS', '0', 'SHUTDOWN_TIMEOUT_MS must be a whole number, 1 or more'],
    ['SHUTDOWN_TIMEOUT_MS', '-5', 'SHUTDOWN_TIMEOUT_MS must be a whole number, 1 or more'],
    ['MAX_WAITING_FEEDS_PER_ACCOUNT', '0', 'MAX_WAITING_FEEDS_PER_ACCOUNT must be a whole number, 1 or more'],
    ['SHUTDOWN_DELAY_MS', '5s', 'SHUTDOWN_DELAY_MS must be a whole number, 0 or more'],
    ['MIGRATE_ON_START', 'no', 'MIGRATE_ON_START must be true or false'],
    ['ADMIN_TOKEN', 'short', 'ADMIN_TOKEN must be at least 16 characters'],
    ['EVENT_LOG_SIZE', '0', 'EVENT_LOG_SIZE must be a whole number from 1 to 1000000'],
    ['WEBHOOK_TOLERANCE_SECONDS', '301', 'WEBHOOK_TOLERANCE_SECONDS must be a whole number from 1 to 300'],
    ['DATABASE_URL', 'mysql://db/x', 'DATABASE_URL must be a postgres:// or postgresql:// connection URL'],
    ['DATABASE_POOL_SIZE', '0', 'DATABASE_POOL_SIZE must be a whole number from 1 to 1000'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '1.5', 'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number'],
    ['DATABASE_POOLER', 'session', 'DATABASE_POOLER must be none or transaction'],
    ['TRUST_PROXY', 'true', 'TRUST_PROXY true is refused: it lets any client choose its address for the rate limits'],
    ['TRUST_PROXY', '10.0.0.0/33', 'TRUST_PROXY must be a number of proxies (0 to 10), or addresses and subnets of your proxies'],
    ['TRUST_PROXY', 'my-proxy', 'TRUST_PROXY must be a number of proxies'],
    // As wide as `true`: all of IPv4 in two halves, all of IPv6, or more hops than any real chain of proxies.
    [
      'TRUST_PROXY',
      '0.0.0.0/1,128.0.0.0/1',
      'TRUST_PROXY must be a number of proxies (0 to 10), or addresses and subnets of your proxies (IPv4 /8 or narrower, IPv6 /7 or narrower, IPv4-mapped ::ffff:a.b.c.d /104 or narrower)',
    ],
    ['TRUST_PROXY', '0.0.0.0/0', 'TRUST_PROXY must be a number of proxies'],
    ['TRUST_PROXY', '::/0', 'TRUST_PROXY must be a number of proxies'],
    ['TRUST_PROXY', '999', 'TRUST_PROXY must be a number of proxies (0 to 10)'],
    // All of IPv4, or more than an IPv4 /8 of it, as an IPv4-mapped IPv6 subnet: Express's proxy-addr matches IPv4 peers against it.
    ['TRUST_PROXY', '::ffff:0:0/96', 'TRUST_PROXY must be a number of proxies (0 to 10), or addresses and subnets of your proxies'],
    ['TRUST_PROXY', '::ffff:0.0.0.0/96', 'TRUST_PROXY must be a number of proxies'],
    ['TRUST_PROXY', '0:0:0:0:0:FFFF:0a00:0/103', 'TRUST_PROXY must be a number of proxies'],
    ['TRUST_PROXY', '10.0.0.1,::ffff:10.0.0.0/100', 'TRUST_PROXY must be a number of proxies'],
    ['MAX_CONNECTIONS', 'lots', 'MAX_CONNECTIONS must be a whole number'],
    ['MAX_CONNECTIONS_PER_ADDRESS', '-3', 'MAX_CONNECTIONS_PER_ADDRESS must be a whole number, 0 or more'],
    ['MAX_TOKENS_PER_ACCOUNT', '-1', 'MAX_TOKENS_PER_ACCOUNT must be a whole number'],
    ['MAX_BOOKINGS_PER_ACCOUNT', 'many', 'MAX_BOOKINGS_PER_ACCOUNT must be a whole number'],
    ['MAX_KEYS_PER_ACCOUNT', '-1', 'MAX_KEYS_PER_ACCOUNT must be a whole number, 0 or more'],
    ['DELIVERY_TIMEOUT_MS', '0', 'DELIVERY_TIMEOUT_MS must be a whole number from 1 to 2147483647'],
    ['DELIVERY_ALLOW_HTTP', 'yes', 'DELIVERY_ALLOW_HTTP must be true or false'],
    ['DELIVERY_CONCURRENCY', '0', 'DELIVERY_CONCURRENCY must be a whole number from 1 to 1000'],
    ['DELIVERY_LEASE_MS', '30s', 'DELIVERY_LEASE_MS must be a whole number'],
    // Strictly milliseconds and commas: no spaces, units, empty, zero or negative steps, nor one past a timer's reach.
    ...['5000, 300000', '5s,5m', '5000,,300000', '5000,', '0,5000', '-5000', '2147483648'].map((schedule) => [
      'DELIVERY_RETRY_SCHEDULE',
      schedule,
      'DELIVERY_RETRY_SCHEDULE must be 1 to 100 waits in milliseconds (whole numbers from 1 to 2147483647) separated by commas, without spaces',
    ]),
  ])('stops on a bad %s = %p with a message naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  // Each secret the documentation publishes, as each setting that could take it (ADMIN_TOKEN needs 16 characters).
  const placements = [...PUBLISHED_SECRETS].flatMap((secret) => [
    ...(secret.startsWith('whsec_') ? [['WEBHOOK_SECRET', secret]] : []),
    ...(secret.length >= 16 ? [['ADMIN_TOKEN', secret]] : []),
  ]);

  it.each(placements)('with NODE_ENV=production refuses %s = %p, a value the documentation publishes', (name, secret) => {
    const message = `Invalid configuration: ${name} is a value published in this repository's documentation; NODE_ENV=production needs a secret of your own`;
    expect(() => loadConfig({ NODE_ENV: 'production', [name]: secret })).toThrow(message);
    expect(() => loadConfig({ [name]: secret })).not.toThrow();
  });

  it('the published secrets it refuses are every one the documentation and the demo seed show (npm run published-secrets)', () => {
    expect(readFileSync(PUBLISHED_SECRETS_FILE, 'utf8')).toBe(renderPublishedSecrets());
    // One of each kind, as the README, SIGNING.md and the demo seed show them.
    for (const secret of [
      'whsec_ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx',
      'demo-admin-token-0001',
      'pk_demo_PDR28_7f3a9c2e',
      'sk_demo_HTL07_a8c2f513',
    ]) {
      expect(PUBLISHED_SECRETS).toContain(secret);
    }
  });

  it.each([
    // SIGNING.md's secret without its whsec_ prefix: standardwebhooks reads it as the same key.
    ['WEBHOOK_SECRET', 'ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx'],
    // Rotation lists take spaces or commas: the published one anywhere in the list.
    ['WEBHOOK_SECRET', 'whsec_b3duLXNlY3JldC1vZi1yZWFsMQ==,whsec_ZGVtby1zaWduaW5nLXNlY3JldC0wMDAwMDAwMDAx'],
    ['ADMIN_TOKEN', 'DEMO-ADMIN-TOKEN-0001'],
    ['ADMIN_TOKEN', ' demo-admin-token-0001 '],
  ])('with NODE_ENV=production refuses %s = %p: a published secret spelled another way is the same key', (name, secret) => {
    const message = `Invalid configuration: ${name} is a value published in this repository's documentation; NODE_ENV=production needs a secret of your own`;
    expect(() => loadConfig({ NODE_ENV: 'production', [name]: secret })).toThrow(message);
  });

  it.each([' production', 'prod', 'PRODUCTION', 'staging'])('refuses NODE_ENV=%p: production, development or test only', (value) => {
    expect(() => loadConfig({ NODE_ENV: value })).toThrow('NODE_ENV must be production, development or test');
  });

  it('takes NODE_ENV production, development and test', () => {
    expect(['production', 'development', 'test'].map((value) => loadConfig({ NODE_ENV: value, SEED_FILE: 'demo' }).production)).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('names every bad setting at once', () => {
    expect(() => loadConfig({ PORT: 'x', BODY_LIMIT: 'y' })).toThrow(/PORT .*; BODY_LIMIT /);
  });
});
