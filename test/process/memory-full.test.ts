import { errorBody } from '../helpers/http';
import { tokenCreation, withdrawal } from '../helpers/payloads';
import { startServer, type ServerProcess } from '../helpers/server-process';

jest.setTimeout(180_000);

/** A heap this small fills within a few thousand Create Tokens (the finding: a 96 MB heap died after some 14,000). */
const HEAP_MB = 80;
const IN_FLIGHT = 8;

const details = {
  token_name: 'n'.repeat(255),
  customer_name: 'c'.repeat(255),
  token_reference: 'r'.repeat(255),
  booking_reference: 'b'.repeat(255),
};

const bookingDetails = {
  property_name: 'p'.repeat(255),
  supplier_id: 's'.repeat(255),
  auth_code: 'a'.repeat(255),
  booking_category: 'c'.repeat(255),
};

/** Sends requests IN_FLIGHT at a time until one is refused or the process dies; the first refusal and how many were sent. */
async function sendUntilRefused(port: number, request: (n: string) => { method: string; path: string; body: string }) {
  let sent = 0;
  let refused: { status: number; body: unknown } | undefined;
  const lane = async () => {
    while (!refused && sent < 200_000 && server?.child.exitCode === null) {
      sent += 1;
      const { method, path, body } = request(String(sent).padStart(8, '0'));
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body });
      const answer = { status: response.status, body: await response.json() };
      if (answer.status !== 200) refused ??= answer;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return { sent, refused };
}

let server: ServerProcess | undefined;

/** Contract section 11: the memory store refuses to create anything once the heap in use passes 85% of its limit. */
describe('the memory store near its heap limit', () => {
  afterAll(() => {
    server?.child.kill('SIGKILL');
  });

  it('refuses Create Token and a Modify Booking under a new key with a 503, logged and counted, instead of running out of memory; operations on existing tokens go on', async () => {
    server = await startServer({
      NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
      MAX_TOKENS_PER_ACCOUNT: '0',
      MAX_KEYS_PER_ACCOUNT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    });
    const { port } = server;
    const createToken = JSON.stringify(
      tokenCreation({ share_secret: 'sk_demo_PDR28_d41b8e60', source_id: 'PDR28', destination_id: 'ID001', ...details }),
    );
    const tokens = await sendUntilRefused(port, (n) => ({ method: 'POST', path: `/v1/token/PDR28/fill-${n}`, body: createToken }));
    process.stdout.write(`memory full: ${tokens.sent} Create Tokens sent before the first refusal with a ${HEAP_MB} MB heap\n`);
    expect(tokens.refused).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    expect(server.child.exitCode).toBeNull();

    const spent = await fetch(`http://127.0.0.1:${port}/v1/tokens/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(
        withdrawal({
          share_public: 'pk_demo_PDR28_7f3a9c2e',
          source_id: 'PDR28',
          destination_id: 'ID001',
          token_id: '2908926013012565',
          withdrawn_amount: '1.00',
          token_balance: '999.00',
        }),
      ),
    });
    expect(spent.status).toBe(200);
    // Modify Bookings under new keys, each keeping its answer's bytes: the attack review's way to the heap's end.
    const modifyBooking = JSON.stringify({
      share_secret: 'sk_demo_PDR28_d41b8e60',
      booking_event: 'modify',
      source_id: 'PDR28',
      booking_id: '1396',
      ...bookingDetails,
    });
    const keys = await sendUntilRefused(port, (n) => ({ method: 'PATCH', path: `/v1/booking/PDR28/grow-${n}`, body: modifyBooking }));
    process.stdout.write(`memory full: ${keys.sent} Modify Bookings under new keys sent before the first refusal\n`);
    expect(keys.refused).toEqual({ status: 503, body: errorBody(503, 'Service Unavailable') });
    const metrics = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^receiver_store_errors_total\{kind="full"\} [1-9]/m);
    expect(server.stdout.some((line) => line.includes('memory store full'))).toBe(true);
    expect(server.child.exitCode).toBeNull();
  });
});
