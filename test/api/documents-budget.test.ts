import type { Server } from 'node:http';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/process/http-server';
import { MemoryStore } from '../../src/store/memory-store';
import { testConfig } from '../helpers/app';
import { capturingLogger } from '../helpers/capture';
import { errorBody } from '../helpers/http';

/**
 * Contract section 11: one caller never weakens the service for another. The documents are open and large, and
 * their 200s never count toward the per-address failures, so they have a budget per address of their own.
 * Served without the traffic capture (test/helpers/app.ts): the OpenAPI document's examples carry the demo seed's
 * published keys, which the capture's leak check would report.
 */
describe('RATE_LIMIT_DOCUMENTS_PER_ADDRESS_PER_MINUTE', () => {
  let server: Server;
  beforeEach(() => {
    const config = testConfig({ rateLimitDocumentsPerAddressPerMinute: 3, trustProxy: 1 });
    server = createHttpServer(createApp({ store: new MemoryStore(), logger: capturingLogger(), config }));
  });

  const from = (address: string, path: string) => request(server).get(path).set('X-Forwarded-For', address);

  it('counts every request for the documents, answered or not: past it one address gets a 429 with Retry-After, another still gets its document', async () => {
    expect((await from('203.0.113.1', '/openapi.json')).status).toBe(200);
    expect((await from('203.0.113.1', '/docs')).status).toBe(200);
    expect((await from('203.0.113.1', '/docs/assets/nothing.js')).status).toBe(404);
    const limited = await from('203.0.113.1', '/openapi.json');
    expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: errorBody(429, 'Too Many Requests') });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await from('203.0.113.1', '/docs/init.js')).status).toBe(429);
    const other = await from('203.0.113.2', '/openapi.json');
    expect({ status: other.status, openapi: other.body.openapi }).toEqual({ status: 200, openapi: '3.1.0' });
    expect((await from('203.0.113.1', '/healthz')).status).toBe(200);
  });
});
