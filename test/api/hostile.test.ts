import fc from 'fast-check';
import request from 'supertest';
import { describeOnEveryStore, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { bookingChange, statusChange, withdrawal } from '../helpers/payloads';
import { readState } from '../helpers/state';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Its tests run one long property each (test/helpers/property.ts), or one hostile body.
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

const ADMIN_TOKEN = 'admin-test-token-0123456789';

interface Route {
  name: string;
  send: (t: TestApp) => request.Test;
  valid: () => Record<string, unknown>;
}

const ROUTES: Route[] = [
  { name: 'POST /v1/tokens/status-change', send: (t) => client.statusChange(t), valid: () => statusChange() },
  { name: 'POST /v1/tokens/withdraw', send: (t) => client.withdraw(t), valid: () => withdrawal() },
  // Withdraw's GET (a JSON body on a GET, as the published samples send it): no client sends a GET.
  { name: 'GET /v1/tokens/withdraw', send: (t) => request(t.server).get('/v1/tokens/withdraw'), valid: () => withdrawal() },
  { name: 'POST /v1/events', send: (t) => client.events(t), valid: () => withdrawal() },
  {
    name: 'PATCH /v1/booking/…',
    send: (t) => client.modifyBooking(t, undefined, `key-${Math.random().toString(36).slice(2, 12)}`),
    valid: () => bookingChange(),
  },
];

let generatedCases = 0;
afterAll(() => {
  process.stdout.write(`hostile input: ${generatedCases} generated and hand-picked cases sent\n`);
});

/** The contract's promise for any input: a 4xx envelope (or a 200 when the input happened to be valid), never a 5xx. */
function expectClearAnswer(response: request.Response) {
  if (response.status === 200) return;
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.body).toMatchObject({ success: 'false', errors: { code: String(response.status), message: expect.any(String) } });
  expect(response.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
}

/** Sends, checks the answer, and checks that a rejected request changed nothing. */
async function probe(t: TestApp, send: () => request.Test) {
  generatedCases += 1;
  const before = await readState(t.store);
  const response = await send();
  expectClearAnswer(response);
  if (response.status !== 200) expect(await readState(t.store)).toEqual(before);
  return response;
}

const json = (route: Route, t: TestApp, text: string) => () => route.send(t).set('Content-Type', 'application/json').send(text);

const awkwardStrings = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'AC\u0000ME',
    '\ud800',
    '\uffff',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    'ＡＣＭＥ',
    'A\u200bCME',
    ' ACME',
    'ACME ',
    '../../etc/passwd',
    "' OR 1=1 --",
    '${jndi:x}',
    '<script>',
  ),
);

describeOnEveryStore(
  'hostile input',
  (current) => {
    describe.each(ROUTES.map((route) => [route.name, route] as const))('%s', (_name, route) => {
      it('any JSON value as the body', async () => {
        await fc.assert(
          fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
            await probe(current(), json(route, current(), JSON.stringify(value) ?? 'null'));
          }),
          withinBudget(40),
        );
      });

      it('any bytes as the body', async () => {
        await fc.assert(
          fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }), async (bytes) => {
            await probe(current(), () => route.send(current()).set('Content-Type', 'application/json').send(Buffer.from(bytes)));
          }),
          withinBudget(40),
        );
      });

      it('awkward strings and values in every field of a valid request', async () => {
        const valid = route.valid();
        const fields = Object.keys(valid);
        const value = fc.oneof(
          awkwardStrings,
          fc.constantFrom(null, true, [], {}, 0, -0, 1e308, -1, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 1e-7, Number.MAX_VALUE),
        );
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...fields), value, async (field, replacement) => {
            await probe(current(), json(route, current(), JSON.stringify({ ...valid, [field]: replacement })));
          }),
          withinBudget(50),
        );
      });

      it('__proto__, constructor and prototype keys pollute nothing', async () => {
        const valid = route.valid();
        const key = fc.constantFrom('__proto__', 'constructor', 'prototype');
        await fc.assert(
          fc.asyncProperty(key, fc.jsonValue({ maxDepth: 2 }), fc.boolean(), async (name, value, nested) => {
            const inner = `{${JSON.stringify(name)}:${JSON.stringify(value) ?? 'null'},"polluted":true}`;
            const text = nested
              ? JSON.stringify(valid).replace(/^\{/, `{${JSON.stringify(name)}:${inner},`)
              : JSON.stringify(valid).replace(/^\{/, `{${JSON.stringify(name)}:${JSON.stringify(value) ?? 'null'},`);
            await probe(current(), json(route, current(), text));
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
            expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
          }),
          withinBudget(25),
        );
      });

      it.each([
        ['10,000 nested arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
        ['3,000 nested objects', '{"a":'.repeat(3_000) + '1' + '}'.repeat(3_000)],
        [
          'a field nested 3,000 deep',
          (() => {
            const v = route.valid();
            return JSON.stringify({ ...v, source_id: 'x' }).replace('"x"', '['.repeat(3000) + ']'.repeat(3000));
          })(),
        ],
        ['a 30,000-character string', JSON.stringify({ ...route.valid(), source_id: 'A'.repeat(30_000) })],
        ['a body just over the limit', JSON.stringify({ ...route.valid(), padding: 'p'.repeat(33_000) })],
        ['duplicate keys (the last wins)', JSON.stringify(route.valid()).replace(/^\{/, '{"source_id":"OTHER",')],
        ['a NUL byte in the raw text', JSON.stringify(route.valid()).replace('"ACME"', '"AC\u0000ME"')],
        ['an empty object', '{}'],
        ['whitespace only', '   '],
        ['a BOM before the JSON', `\ufeff${JSON.stringify(route.valid())}`],
        ['numbers past the safe integers', JSON.stringify(route.valid()).replace(/"token_id":("?)\d+\1/, '"token_id":9007199254740993123')],
        ['exponent numbers', JSON.stringify(route.valid()).replace(/"token_id":("?)\d+\1/, '"token_id":1e16')],
      ])('%s', async (_what, text) => {
        await probe(current(), json(route, current(), text));
      });

      it('any charset parameter other than UTF-8 is refused with 415', async () => {
        const charset = fc.stringMatching(/^[a-z0-9-]{1,12}$/).filter((c) => c !== 'utf-8');
        await fc.assert(
          fc.asyncProperty(charset, async (name) => {
            const response = await probe(current(), () =>
              route.send(current()).set('Content-Type', `application/json; charset=${name}`).send(JSON.stringify(route.valid())),
            );
            expect(response.status).toBe(415);
          }),
          withinBudget(15),
        );
      });
    });

    // Generated paths, which no client builds.
    it('admin routes take any path and query without a 5xx', async () => {
      const segment = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('%00', '%2F', '..', '%ZZ', '9'.repeat(40)));
      await fc.assert(
        fc.asyncProperty(segment, segment, async (a, b) => {
          for (const path of [
            `/admin/tokens/${encodeURIComponent(a)}`,
            `/admin/bookings/${encodeURIComponent(a)}/${encodeURIComponent(b)}`,
            `/admin/events?source_id=${encodeURIComponent(a)}&token_id=${encodeURIComponent(b)}&limit=${encodeURIComponent(b)}`,
          ]) {
            generatedCases += 1;
            const response = await request(current().server).get(path).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
            if (response.status !== 200) expectClearAnswer(response);
          }
        }),
        withinBudget(30),
      );
    });

    // Malformed paths, which no client builds.
    it('raw %00 and malformed escapes in the path answer 4xx', async () => {
      for (const path of ['/v1/booking/AC%00ME/key-00000001', '/v1/booking/ACME/key-%ZZ', '/%E0%A4%A', `/v1/tokens/withdraw%00`]) {
        await probe(current(), () => request(current().server).patch(path).send(bookingChange()));
      }
    });
  },
  { config: { adminToken: ADMIN_TOKEN } },
);
