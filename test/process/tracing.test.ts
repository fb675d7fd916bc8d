import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { sql, TEST_DATABASE_URL } from '../helpers/postgres';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { waitFor } from '../helpers/wait';
import { SERVICE_VERSION } from '../../src/process/version';

/** An attribute as OTLP/HTTP's JSON encoding carries it. */
interface ExportedAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}

/** A span as OTLP/HTTP's JSON encoding carries it (ids in hex), with the attributes of its resource. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes?: ExportedAttribute[];
  resource: ExportedAttribute[];
}

/** An attribute's value as a string, undefined when the span or resource does not carry it. */
function attribute(attributes: ExportedAttribute[] | undefined, key: string): string | undefined {
  const value = attributes?.find((entry) => entry.key === key)?.value;
  return value === undefined ? undefined : String(value.stringValue ?? value.intValue);
}

/** A local OTLP/HTTP receiver: records every span it is sent at /v1/traces. */
async function traceReceiver(): Promise<{ server: Server; endpoint: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const sent = JSON.parse(body) as {
          resourceSpans: Array<{ resource: { attributes: ExportedAttribute[] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }>;
        };
        for (const { resource, scopeSpans } of sent.resourceSpans)
          for (const scope of scopeSpans) spans.push(...scope.spans.map((span) => ({ ...span, resource: resource.attributes })));
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';
const WITHDRAWAL = {
  share_public: 'pk_demo_PDR28_7f3a9c2e',
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
};

/** How many of OpenTelemetry's modules the process has loaded once src/process/tracing.ts ran, with the environment given. */
function openTelemetryModulesLoaded(env: Record<string, string>): number {
  const script =
    "require('./src/process/tracing'); console.log(Object.keys(require.cache).filter((file) => file.includes('@opentelemetry')).length)";
  const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return Number(output.trim());
}

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('nothing of OpenTelemetry is loaded (with it, the SDK is)', () => {
    expect(openTelemetryModulesLoaded({})).toBe(0);
    expect(openTelemetryModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toBeGreaterThan(10);
  });
});

/** Contract section 12: with OTEL_EXPORTER_OTLP_ENDPOINT set, traces continue the caller's and reach the collector. */
describe('traces (OpenTelemetry), exported over OTLP/HTTP', () => {
  let receiver: Awaited<ReturnType<typeof traceReceiver>>;
  let server: ServerProcess | undefined;
  beforeEach(async () => {
    receiver = await traceReceiver();
  });
  afterEach(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  /** A withdrawal continuing the caller's trace; `flags` is traceparent's last field (01: the caller sampled it). */
  const withdraw = (port: number, { flags = '01', query = '' } = {}) =>
    fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_SPAN_ID}-${flags}` },
      body: JSON.stringify(WITHDRAWAL),
    });

  /** Stops the server: the SDK exports what it holds before the process exits, so the receiver then has every span. */
  async function stopped(running: ServerProcess): Promise<void> {
    running.child.kill('SIGTERM');
    await running.exited;
    server = undefined;
  }

  const caller = (span: ExportedSpan) => span.traceId === TRACE_ID;

  it("continues the caller's traceparent in one span named `{method} {route}`, the operation an attribute; the resource names the version and INSTANCE_ID; probes are not traced", async () => {
    server = await startServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, INSTANCE_ID: 'receiver-7' });
    for (const probe of ['/healthz', '/readyz']) expect((await fetch(`http://127.0.0.1:${server.port}${probe}`)).status).toBe(200);
    expect((await withdraw(server.port)).status).toBe(200);
    const { stdout } = server;
    await stopped(server);

    expect(receiver.spans.filter(caller).map((span) => span.name)).toEqual(['POST /v1/tokens/withdraw']);
    const requestSpan = receiver.spans.find(caller) as ExportedSpan;
    expect(requestSpan.parentSpanId).toBe(PARENT_SPAN_ID);
    expect(attribute(requestSpan.attributes, 'receiver.operation')).toBe('withdraw');
    expect(attribute(requestSpan.resource, 'service.version')).toBe(SERVICE_VERSION);
    expect(attribute(requestSpan.resource, 'service.instance.id')).toBe('receiver-7');
    expect(receiver.spans.filter((span) => span.traceId !== TRACE_ID).map((span) => span.name)).toEqual([]);
    const line = stdout
      .map((text) => JSON.parse(text))
      .find((entry) => entry.msg === 'request completed' && entry.req.url === '/v1/tokens/withdraw');
    expect(line).toMatchObject({ instance: 'receiver-7', trace_id: TRACE_ID, span_id: requestSpan.spanId });
  });

  it('redacts the values of secret-like query parameters alike in the span (url.query) and in the log line', async () => {
    const secrets = ['share_secret', 'share_public', 'key', 'password', 'token', 'access_token', 'api_key', 'authorization', 'sig'];
    const query = `${secrets.map((name, index) => `${name}=secret${index}`).join('&')}&page=2`;
    const redacted = `${secrets.map((name) => `${name}=[redacted]`).join('&')}&page=2`;
    server = await startServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect((await withdraw(server.port, { query: `?${query}` })).status).toBe(200);
    const { stdout } = server;
    await stopped(server);

    expect(receiver.spans.filter(caller).map((span) => attribute(span.attributes, 'url.query'))).toEqual([redacted]);
    const line = stdout.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'request completed');
    expect(line.req.url).toBe(`/v1/tokens/withdraw?${redacted}`);
  });

  it.each([
    { ratio: '0', flags: '01', trust: 'false', exported: false },
    { ratio: '1', flags: '00', trust: 'false', exported: true },
    { ratio: '0', flags: '01', trust: 'true', exported: true },
  ])(
    "with OTEL_TRACES_SAMPLER_ARG=$ratio, a caller's traceparent flags $flags and TRACES_TRUST_CALLER_SAMPLING=$trust, the request's trace is exported: $exported",
    async ({ ratio, flags, trust, exported }) => {
      server = await startServer({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: ratio,
        TRACES_TRUST_CALLER_SAMPLING: trust,
      });
      for (let request = 0; request < 5; request += 1) expect((await withdraw(server.port, { flags })).status).toBe(200);
      await stopped(server);

      expect(receiver.spans.filter(caller).length).toBe(exported ? 5 : 0);
    },
  );

  (TEST_DATABASE_URL ? it : it.skip)(
    "on PostgreSQL, group commit's batch is a span linked to the request's, its round trips spans under it; the store's own work (migrations, the seed, the sweep) starts no trace",
    async () => {
      const schema = 'tracing_test';
      await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql(`CREATE SCHEMA ${schema}`);
      const url = new URL(TEST_DATABASE_URL as string);
      url.searchParams.set('options', `-c search_path=${schema}`);
      try {
        server = await startServer({
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_BSP_SCHEDULE_DELAY: '100',
          DATABASE_URL: url.toString(),
          SEED_FILE: '',
        });
        expect((await withdraw(server.port)).status).toBe(200);
        const linked = () =>
          receiver.spans.find((span) => span.name === 'group commit batch' && span.links?.some((link) => link.traceId === TRACE_ID));
        await waitFor(async () => linked() !== undefined && receiver.spans.some((span) => span.parentSpanId === linked()?.spanId));
        const batch = linked() as ExportedSpan;
        expect(batch.traceId).not.toBe(TRACE_ID);
        const roundTrips = receiver.spans.filter((span) => span.parentSpanId === batch.spanId);
        expect(roundTrips.length).toBeGreaterThanOrEqual(1);
        await stopped(server);
        const SERVER_KIND = 2;
        const roots = receiver.spans.filter(
          (span) => !span.parentSpanId || (span.traceId === TRACE_ID && span.parentSpanId === PARENT_SPAN_ID),
        );
        expect(roots.filter((span) => span.kind !== SERVER_KIND && span.name !== 'group commit batch').map((span) => span.name)).toEqual(
          [],
        );
      } finally {
        server?.child.kill('SIGTERM');
        await server?.exited;
        server = undefined;
        await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    },
  );
});
