import http from 'node:http';

// Requests that stay in flight until the test lets them finish, for the tests of a drain.

/** The demo seed's first withdrawal, as the README sends it. */
export const DEMO_WITHDRAWAL = JSON.stringify({
  share_public: 'pk_demo_PDR28_7f3a9c2e',
  read_event: 'token.withdrawn_created',
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
  transaction_id: '20240121000000000001',
  withdrawn_amount: '100.00',
  token_balance: '900.00',
});

/** Opens a withdrawal and sends only the first half of its body; the rest goes when `finish` is called. */
export function startSlowRequest(port: number, body = DEMO_WITHDRAWAL) {
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/tokens/withdraw',
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  const sent = new Promise<void>((resolve) => req.write(body.slice(0, 40), () => resolve()));
  return { response, sent, finish: () => req.end(body.slice(40)) };
}

/**
 * Resolves once the server has read the slow request's head, so that it is in flight there: its bytes were handed
 * to the kernel before a probe on a new connection was sent, and the server reads ready sockets in the order they
 * became ready, so the probe's answer comes after the slow request's head was read.
 */
export async function inFlight(port: number, slow: ReturnType<typeof startSlowRequest>): Promise<void> {
  await slow.sent;
  const status = await get(port, '/healthz');
  if (status !== 200) throw new Error(`the probe behind the slow request answered ${status}`);
}

/** Whether the port refuses connections. */
export const refuses = (port: number) =>
  get(port, '/readyz').then(
    () => false,
    () => true,
  );

export async function get(port: number, urlPath: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}${urlPath}`);
  return response.status;
}
