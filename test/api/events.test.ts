import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { TOKENS } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { availableDate, expiryDate, loaded, loadSchedule, statusChange, unloaded, withdrawal } from '../helpers/payloads';
import { dayNumber } from '../../src/domain/calendar-days';
import { readState, readToken } from '../helpers/state';

describeOnEveryStore('POST /v1/events', (current) => {
  it('dispatches token.status_changed to Status Change', async () => {
    const response = await client.events(current(), statusChange());
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    expect((await readToken(current().store, TOKENS.active.token_id))?.status).toBe('freezed');
  });

  it.each([
    ['token.loaded_created to Loaded (never Unloaded here)', () => loaded(), { balance: 110000 }],
    ['token.unloaded_created to Unloaded', () => unloaded(), { balance: 90000 }],
    ['token.load_schedule to Load Schedule', () => loadSchedule(), { balance: 125000 }],
    ['token.expiry_updated to Expiry Date', () => expiryDate(), { expiryDay: dayNumber('31-12-2026') }],
    ['token.available_updated to Available Date', () => availableDate(), { availableDay: dayNumber('01-01-2026') }],
  ])('dispatches %s', async (_what, body, expected) => {
    const sent = body();
    const response = await client.events(current(), sent);
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    expect(await readToken(current().store, TOKENS.active.token_id)).toMatchObject(expected);
    const replayed = await client.events(current(), sent);
    expect(await readToken(current().store, TOKENS.active.token_id)).toMatchObject(expected);
    expect(replayed.status).toBe(200);
  });

  it('a token.status_changed with a misspelt status field is the same 400 as on its own route, and changes nothing', async () => {
    const before = await readState(current().store);
    const response = await client.events(current(), { ...statusChange({ tokes_status: undefined }), status: 'freezed' });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: errorBody(400, 'Invalid field: status', [
        { field: 'status', message: 'is an unknown field: the status is tokes_status (or its alias token_status)' },
      ]),
    });
    expect(await readState(current().store)).toEqual(before);
  });

  it('dispatches token.withdrawn_created to Withdraw, with the same idempotency', async () => {
    const body = withdrawal();
    await client.events(current(), body).expect(200);
    const replay = await client.withdraw(current(), body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await readToken(current().store, TOKENS.active.token_id))?.balance).toBe(90000);
  });

  it("applies the operation's own validation after dispatching", async () => {
    const response = await client.events(current(), withdrawal({ withdrawn_amount: 'lots' }));
    expect(response.status).toBe(400);
    expect(response.body.errors.details).toEqual([
      {
        field: 'withdrawn_amount',
        message: 'must be a decimal amount: 1 to 10 digits, optionally a point and 1 or 2 decimals (e.g. "100.00")',
      },
    ]);
  });

  it.each([
    [
      'unknown',
      'token.created',
      'must be one of "token.status_changed", "token.withdrawn_created", "token.loaded_created", "token.unloaded_created", "token.load_schedule", "token.expiry_updated", "token.available_updated", "token.refund_available"',
    ],
    ['missing', undefined, 'is required'],
    [
      'not a string',
      5,
      'must be one of "token.status_changed", "token.withdrawn_created", "token.loaded_created", "token.unloaded_created", "token.load_schedule", "token.expiry_updated", "token.available_updated", "token.refund_available"',
    ],
  ])('400 when read_event is %s, and nothing changes', async (_situation, readEvent, message) => {
    const before = await readState(current().store);
    const response = await client.events(current(), withdrawal({ read_event: readEvent }));
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: errorBody(400, 'Invalid field: read_event', [{ field: 'read_event', message }]),
    });
    expect(await readState(current().store)).toEqual(before);
  });
});
