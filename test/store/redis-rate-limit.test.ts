import request from 'supertest';
import { Metrics } from '../../src/process/metrics';
import { connectRedis, RedisOutage } from '../../src/process/redis';
import { buildTestApp } from '../helpers/app';
import { CuttableProxy } from '../helpers/cuttable-proxy';
import { waitFor } from '../helpers/wait';
import { capturingLogger, captured } from '../helpers/capture';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { otherAccountStatusChange, statusChange, tokenCreation, tokenPath } from '../helpers/payloads';
import { noteIfNoRedis, TEST_REDIS_URL, testRedis } from '../helpers/redis';

noteIfNoRedis();

const noChange = () => statusChange({ tokes_status: undefined });

(TEST_REDIS_URL ? describe : describe.skip)('rate limits with REDIS_URL', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  beforeAll(async () => {
    redis = await testRedis();
  });
  afterAll(async () => {
    await redis.client.close();
  });

  it("two instances share one account's budget: the third request, on either, is a 429", async () => {
    const keyPrefix = `test:${process.pid}:${Date.now()}:`;
    const shared = {
      redis: { sendCommand: redis.sendCommand, keyPrefix, outage: new RedisOutage(capturingLogger()) },
      config: { rateLimitPerMinute: 2 },
    };
    const [first, second] = [await buildTestApp(undefined, shared), await buildTestApp(undefined, shared)];
    await request(first.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
    await request(second.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
    const limited = await request(first.server).post('/v1/tokens/status-change').send(noChange());
    expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
    expect(await redis.client.keys(`${keyPrefix}*`)).toEqual([`${keyPrefix}account:ACME`]);
  });

  it("one account's refusals on one instance never lock another account out from the same address on the other: 403 key_limit, then a 200", async () => {
    const keyPrefix = `test:${process.pid}:${Date.now()}:refusals:`;
    const shared = {
      redis: { sendCommand: redis.sendCommand, keyPrefix, outage: new RedisOutage(capturingLogger()) },
      config: { rateLimitPerAddressPerMinute: 2, quotas: { tokensPerAccount: 0, bookingsPerAccount: 0, keysPerAccount: 1 } },
    };
    const [first, second] = [await buildTestApp(undefined, shared), await buildTestApp(undefined, shared)];
    await request(first.server).post(tokenPath('refusals-0000')).send(tokenCreation()).expect(200);
    for (let i = 1; i <= 4; i += 1) {
      const refused = await request(first.server)
        .post(tokenPath(`refusals-000${i}`))
        .send(tokenCreation());
      expect({ status: refused.status, message: refused.body.errors.message }).toEqual({
        status: 403,
        message: expect.stringMatching(/^Key limit reached/),
      });
    }
    const others = await request(second.server).post('/v1/tokens/status-change').send(otherAccountStatusChange());
    expect({ status: others.status, body: others.body }).toEqual({ status: 200, body: SUCCESS_BODY });
  });

  it("two instances share an address's documents budget: the third request for them, on either, is a 429", async () => {
    const keyPrefix = `test:${process.pid}:${Date.now()}:documents:`;
    const shared = {
      redis: { sendCommand: redis.sendCommand, keyPrefix, outage: new RedisOutage(capturingLogger()) },
      config: { rateLimitDocumentsPerAddressPerMinute: 2 },
    };
    const [first, second] = [await buildTestApp(undefined, shared), await buildTestApp(undefined, shared)];
    await request(first.server).get('/docs').expect(200);
    await request(second.server).get('/docs/init.js').expect(200);
    const limited = await request(first.server).get('/docs');
    expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
    expect(await redis.client.keys(`${keyPrefix}*`)).toEqual([expect.stringMatching(new RegExp(`^${keyPrefix}documents:`))]);
  });

  it('when Redis cannot be reached, requests go through, and the failure is logged and counted', async () => {
    const metrics = new Metrics();
    const unreachable = connectRedis('redis://127.0.0.1:1', capturingLogger());
    const t = await buildTestApp(undefined, {
      metrics,
      redis: { sendCommand: unreachable.sendCommand, keyPrefix: 'test:unreachable:', outage: unreachable.outage },
      config: { rateLimitPerMinute: 1 },
    });
    try {
      for (let i = 0; i < 3; i += 1) {
        const response = await request(t.server).post('/v1/tokens/status-change').send(noChange());
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
      }
    } finally {
      await unreachable.close();
    }
    expect(await metrics.registry.getSingleMetricAsString('receiver_rate_limit_store_errors_total')).toContain(
      'receiver_rate_limit_store_errors_total 3',
    );
    expect(captured.logLines.filter((line) => line.includes('Redis unreachable')).length).toBe(1);
  });

  it('when Redis goes away, the outage is logged when it starts and when it ends with the requests it let through uncounted, without a stack, and receiver_redis_up is 0 while it lasts', async () => {
    const { proxy, url } = await CuttableProxy.start(TEST_REDIS_URL as string);
    const metrics = new Metrics();
    const connection = connectRedis(url, capturingLogger(), metrics);
    const keyPrefix = `test:${process.pid}:${Date.now()}:outage:`;
    const t = await buildTestApp(undefined, {
      metrics,
      redis: { sendCommand: connection.sendCommand, keyPrefix, outage: connection.outage },
      config: { rateLimitPerMinute: 100 },
    });
    const up = async () => (await metrics.registry.getSingleMetricAsString('receiver_redis_up')).split('\n').at(-1);
    let linesFrom: number | undefined;
    try {
      // Connected first: a command sent before the connection is taken fails, and counts as an outage of its own.
      await waitFor(async () => (await connection.sendCommand('PING').catch(() => undefined)) === 'PONG');
      linesFrom = captured.logLines.length;
      expect(await up()).toBe('receiver_redis_up 1');
      proxy.cut();
      for (let i = 0; i < 3; i += 1) await request(t.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
      expect(await up()).toBe('receiver_redis_up 0');
      proxy.restore();
      await waitFor(async () => (await up()) === 'receiver_redis_up 1');
    } finally {
      await connection.close();
      await proxy.stop();
    }
    const lines = captured.logLines
      .slice(linesFrom)
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg !== 'request completed');
    expect(lines.map(({ level, msg, requestsUncounted }) => ({ level, msg, requestsUncounted }))).toEqual([
      { level: 40, msg: 'Redis unreachable: rate limits are counted by nobody until it returns', requestsUncounted: undefined },
      { level: 30, msg: 'Redis reachable again: rate limits are shared', requestsUncounted: 3 },
    ]);
    expect(lines.filter((line) => line.err !== undefined)).toEqual([]);
  });

  it('when Redis is unreachable as the service starts, counting begins by itself once it is reachable', async () => {
    const { proxy, url } = await CuttableProxy.start(TEST_REDIS_URL as string);
    proxy.cut();
    const connection = connectRedis(url, capturingLogger());
    const keyPrefix = `test:${process.pid}:${Date.now()}:late:`;
    const t = await buildTestApp(undefined, {
      redis: { sendCommand: connection.sendCommand, keyPrefix, outage: connection.outage },
      config: { rateLimitPerMinute: 1 },
    });
    try {
      for (let i = 0; i < 2; i += 1) await request(t.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
      proxy.restore();
      await waitFor(async () => (await connection.sendCommand('PING').catch(() => undefined)) === 'PONG');
      await request(t.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
      const limited = await request(t.server).post('/v1/tokens/status-change').send(noChange());
      expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
      expect(await redis.client.keys(`${keyPrefix}*`)).toEqual([`${keyPrefix}account:ACME`]);
    } finally {
      await connection.close();
      await proxy.stop();
    }
  });

  it('when Redis stops answering on an open connection, requests go through within a second each, and the misses are counted', async () => {
    const { proxy, url } = await CuttableProxy.start(TEST_REDIS_URL as string);
    const connection = connectRedis(url, capturingLogger());
    const metrics = new Metrics();
    const keyPrefix = `test:${process.pid}:${Date.now()}:hung:`;
    const t = await buildTestApp(undefined, {
      metrics,
      redis: { sendCommand: connection.sendCommand, keyPrefix, outage: connection.outage },
      config: { rateLimitPerMinute: 1 },
    });
    try {
      await waitFor(async () => (await connection.sendCommand('PING').catch(() => undefined)) === 'PONG');
      await request(t.server).post('/v1/tokens/status-change').send(noChange()).expect(200);
      proxy.freeze();
      for (let i = 0; i < 2; i += 1) {
        const started = Date.now();
        const response = await request(t.server).post('/v1/tokens/status-change').send(noChange());
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
        // Generous for a busy machine; without a time limit on commands it never answers.
        expect(Date.now() - started).toBeLessThan(10_000);
      }
      expect(await metrics.registry.getSingleMetricAsString('receiver_rate_limit_store_errors_total')).toContain(
        'receiver_rate_limit_store_errors_total 2',
      );
    } finally {
      await connection.close().catch(() => undefined);
      await proxy.stop();
    }
  });
});
