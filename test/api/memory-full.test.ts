import { MemoryStore } from '../../src/store/memory-store';
import { buildTestApp, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { fixtureSeed } from '../helpers/fixtures';
import { errorBody, SUCCESS_BODY } from '../helpers/http';
import { bookingChange, bookingCreation, statusChange, tokenCreation, withdrawal } from '../helpers/payloads';
import { expectRejection } from '../helpers/state';

const UNAVAILABLE = errorBody(503, 'Service Unavailable');

/**
 * Contract section 11, on the memory store: past 85% of the heap in use nothing new is created, a request key
 * (which keeps its answer's bytes) or a delivery record included, while operations on existing tokens go on
 * to 95%. The attack review grew the heap to its death with Modify Bookings under new keys.
 */
describe('the memory store as its heap fills', () => {
  let share = 0;
  let t: TestApp;
  beforeEach(async () => {
    share = 0;
    const store = new MemoryStore({ heapShareInUse: () => share });
    await store.loadSeed(fixtureSeed());
    t = await buildTestApp(undefined, { store });
  });

  it('past 85%: Create Token, Create Booking and a Modify Booking under a new key are 503 and record nothing; a withdrawal and a status change go on', async () => {
    share = 0.9;
    await expectRejection(t.store, () => client.createToken(t, tokenCreation(), 'full-key-0001'), 503, UNAVAILABLE, {
      keys: ['full-key-0001'],
    });
    await expectRejection(t.store, () => client.createBooking(t, bookingCreation(), 'full-key-0004'), 503, UNAVAILABLE, {
      keys: ['full-key-0004'],
    });
    await expectRejection(t.store, () => client.modifyBooking(t, bookingChange({ guests_count: '3' }), 'full-key-0002'), 503, UNAVAILABLE, {
      keys: ['full-key-0002'],
    });
    const spent = await client.withdraw(t, withdrawal());
    expect({ status: spent.status, body: spent.body }).toEqual({ status: 200, body: SUCCESS_BODY });
    const changed = await client.statusChange(t, statusChange());
    expect({ status: changed.status, body: changed.body }).toEqual({ status: 200, body: SUCCESS_BODY });
  });

  it('past 95%: a withdrawal is 503 too and leaves the balance and the ledger as they were; a status change still goes on', async () => {
    share = 0.96;
    const body = withdrawal();
    await expectRejection(t.store, () => client.withdraw(t, body), 503, UNAVAILABLE, { transactionIds: [String(body.transaction_id)] });
    const changed = await client.statusChange(t, statusChange());
    expect({ status: changed.status, body: changed.body }).toEqual({ status: 200, body: SUCCESS_BODY });
  });

  it('once memory is back under 85%, everything is accepted again', async () => {
    share = 0.9;
    await client.createToken(t, tokenCreation(), 'full-key-0003').expect(503);
    share = 0.5;
    await client.createToken(t, tokenCreation(), 'full-key-0003').expect(200);
  });
});
