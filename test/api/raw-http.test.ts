import http from 'node:http';
import net from 'node:net';
import { buildTestApp, type TestApp } from '../helpers/app';
import { TOKENS } from '../helpers/fixtures';
import { withdrawal } from '../helpers/payloads';
import { readState } from '../helpers/state';

/**
 * Sends bytes on a raw socket and collects everything the server answers until it closes the connection, or
 * until `until` holds of the answer so far (for a connection the server keeps open), or the wait ends: a bound
 * for an answer that never comes, far above what a loaded machine needs. `closedByServer` says which it was.
 */
function rawExchange(
  port: number,
  bytes: string,
  options: { endAfterWrite?: boolean; waitMs?: number; until?: (answer: string) => boolean } = {},
): Promise<{ answer: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let closedByServer = true;
    const stop = () => {
      closedByServer = false;
      socket.destroy();
    };
    const timer = setTimeout(stop, options.waitMs ?? 30_000);
    socket.on('data', (chunk) => {
      answer += chunk;
      if (options.until?.(answer)) stop();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closedByServer });
    });
    socket.on('error', () => undefined);
    socket.write(bytes);
    if (options.endAfterWrite) socket.end();
  });
}

function statusesOf(answer: string): number[] {
  return [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
}

describe('raw HTTP: wrong Content-Length and malformed requests', () => {
  let t: TestApp;
  let server: http.Server;
  let port: number;
  beforeEach(async () => {
    // Node enforces the time limits on a periodic check: tighten all three for the test.
    t = await buildTestApp(undefined, { limits: { connectionsCheckingInterval: 100, headersTimeout: 500, requestTimeout: 1000 } });
    server = t.server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const body = JSON.stringify(withdrawal());
  const head = (length: number) =>
    `POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it('a Content-Length shorter than the body: the cut body gets its JSON 400, then the connection closes; nothing applied', async () => {
    const before = await readState(t.store);
    const { answer } = await rawExchange(port, head(20) + body);
    expect(statusesOf(answer)).toEqual([400]);
    expect(answer).toContain('Connection: close');
    expect(answer).toContain(
      '{"success":"false","errors":{"code":"400","message":"Malformed JSON body: it ends at line 1, column 21 before the JSON is complete"}}',
    );
    expect(await readState(t.store)).toEqual(before);
  });

  it('a Content-Length longer than the body, then the client stops sending: no 5xx, nothing applied', async () => {
    const { answer } = await rawExchange(port, head(body.length + 50) + body, { endAfterWrite: true });
    expect(statusesOf(answer).every((status) => status >= 400 && status < 500)).toBe(true);
    expect((await readState(t.store)).tokens.find((token) => token?.tokenId === TOKENS.active.token_id)?.balance).toBe(100000);
  });

  it('a Content-Length longer than the body, with the client waiting: a JSON 408 at the request time limit', async () => {
    const { answer } = await rawExchange(port, head(body.length + 50) + body);
    expect(statusesOf(answer)).toEqual([408]);
    expect(answer).toContain('{"success":"false","errors":{"code":"408","message":"Request Timeout"}}');
  });

  it.each([
    ['garbage instead of a request line', 'NOT HTTP AT ALL\r\n\r\n'],
    ['a negative Content-Length', 'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n'],
    [
      'two different Content-Lengths',
      'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!',
    ],
    ['a NUL in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n'],
    [
      'a chunked body with a chunk size that is not hex',
      'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
  ])('%s: a JSON 400 and the connection closed', async (_what, bytes) => {
    const { answer } = await rawExchange(port, bytes);
    expect(statusesOf(answer)).toEqual([400]);
    expect(answer).toContain('Content-Type: application/json');
    expect(answer).toContain('{"success":"false","errors":{"code":"400","message":"Malformed HTTP request"}}');
  });

  it('a body declared over the limit: one 413, then the connection closes without reading the rest', async () => {
    const { answer, closedByServer } = await rawExchange(port, `${head(40 * 1024)}{"padding":"${'x'.repeat(1000)}`);
    expect(statusesOf(answer)).toEqual([413]);
    expect(answer).toContain('Connection: close');
    expect(closedByServer).toBe(true);
  });

  it('Expect: 100-continue with a body declared over the limit: the 413 comes first, no 100 Continue invites the upload', async () => {
    const { answer } = await rawExchange(
      port,
      `POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(statusesOf(answer)).toEqual([413]);
  });

  it('Expect: 100-continue with a body that fits: 100 Continue, then the answer', async () => {
    const { answer } = await rawExchange(port, `${head(body.length).replace('\r\n\r\n', '\r\nExpect: 100-continue\r\n\r\n')}${body}`, {
      until: (text) => text.endsWith('"message":"Success"}'),
    });
    expect(statusesOf(answer)).toEqual([100, 200]);
  });

  it('any other Expect: a JSON 417', async () => {
    const { answer } = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n');
    expect(statusesOf(answer)).toEqual([417]);
    expect(answer).toContain(
      '{"success":"false","errors":{"code":"417","message":"Expectation Failed: only Expect: 100-continue is supported"}}',
    );
  });

  it('an HTTP/1.1 request without a Host header: a JSON 400 naming it, then the connection closes', async () => {
    // A path outside the document: like the parser's 400s, this one is transport-level, declared on no operation.
    const { answer, closedByServer } = await rawExchange(port, 'GET /nothing HTTP/1.1\r\n\r\n');
    expect(statusesOf(answer)).toEqual([400]);
    expect(answer).toContain('Connection: close');
    expect(answer).toContain('Content-Type: application/json; charset=utf-8');
    expect(answer.endsWith('{"success":"false","errors":{"code":"400","message":"Missing Host header: HTTP/1.1 requires one"}}')).toBe(
      true,
    );
    expect(closedByServer).toBe(true);
  });

  it('headers over the size limit: a JSON 431', async () => {
    const { answer } = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusesOf(answer)).toEqual([431]);
    expect(answer).toContain('"code":"431"');
  });
});

describe('raw HTTP: the header time limit, with the production checking interval', () => {
  it('an unfinished header block is cut by the server once headersTimeout has passed, with a JSON 408', async () => {
    const t = await buildTestApp(undefined, { limits: { headersTimeout: 1000 } });
    await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    const port = (t.server.address() as net.AddressInfo).port;
    const started = Date.now();
    // Node's own request limit (5 minutes) is far past the wait: only headersTimeout can end it before.
    const { answer, closedByServer } = await rawExchange(port, 'POST /v1/tokens/withdraw HTTP/1.1\r\nHost: x\r\nX-Slow: ', {
      waitMs: 60_000,
    });
    const elapsed = Date.now() - started;
    t.server.closeAllConnections();
    await new Promise((resolve) => t.server.close(resolve));
    expect(statusesOf(answer)).toEqual([408]);
    expect(closedByServer).toBe(true);
    // Not before headersTimeout (a late timer on a busy machine only makes it later).
    expect(elapsed).toBeGreaterThanOrEqual(900);
  });
});
