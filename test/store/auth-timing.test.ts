import crypto from 'node:crypto';
import { describeOnEveryStore, type TestApp } from '../helpers/app';
import * as client from '../helpers/clients';
import { bookingChange, withdrawal } from '../helpers/payloads';

/** One step of the work a request did towards its 401, in the order it was done. */
type Step = 'findAccount' | 'hash' | 'timingSafeEqual';

/**
 * Contract sections 3 and 11 (finding 7 of issue 13): a 401 must not tell a known account from an unknown one by
 * its time. Times on a shared machine prove nothing either way (the benchmark measures them, docs/BENCHMARKS.md),
 * so this checks the cause instead: an unknown account costs the same work as a known one with a wrong key (the
 * same store reads, the same hashes and the same constant-time comparison, in the same order). A shortcut for
 * unknown accounts (a 401 before the hash) drops a step and fails it, however loaded the machine.
 */
async function stepsOf(app: TestApp, send: () => PromiseLike<unknown>): Promise<Step[]> {
  const steps: Step[] = [];
  const findAccount = app.store.findAccount.bind(app.store);
  const { hash, timingSafeEqual } = crypto;
  const spies = [
    jest.spyOn(app.store, 'findAccount').mockImplementation((sourceId) => {
      steps.push('findAccount');
      return findAccount(sourceId);
    }),
    jest.spyOn(crypto, 'hash').mockImplementation((...args) => {
      steps.push('hash');
      return hash(...args);
    }),
    jest.spyOn(crypto, 'timingSafeEqual').mockImplementation((a, b) => {
      steps.push('timingSafeEqual');
      return timingSafeEqual(a, b);
    }),
  ];
  try {
    await send();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return steps;
}

describeOnEveryStore('401 work', (current) => {
  it('a withdrawal with a wrong share_public for a known account and one for an unknown account do the same work', async () => {
    const known = await stepsOf(current(), () => client.withdraw(current(), withdrawal({ share_public: 'pk_wrong_key_000' })).expect(401));
    const unknown = await stepsOf(current(), () =>
      client.withdraw(current(), withdrawal({ source_id: 'NOBODY01', share_public: 'pk_wrong_key_000' })).expect(401),
    );
    expect(known).toEqual(expect.arrayContaining(['findAccount', 'hash', 'timingSafeEqual']));
    expect(unknown).toEqual(known);
  });

  it('a booking change with a wrong share_secret for a known account and one for an unknown account do the same work', async () => {
    const known = await stepsOf(current(), () =>
      client.modifyBooking(current(), bookingChange({ share_secret: 'sk_wrong_key_000' })).expect(401),
    );
    const unknown = await stepsOf(current(), () =>
      client
        .modifyBooking(current(), bookingChange({ source_id: 'NOBODY01', share_secret: 'sk_wrong_key_000' }), undefined, 'NOBODY01')
        .expect(401),
    );
    expect(known).toEqual(expect.arrayContaining(['findAccount', 'hash', 'timingSafeEqual']));
    expect(unknown).toEqual(known);
  });
});
