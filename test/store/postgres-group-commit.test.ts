import { Client } from 'pg';
import { ConflictError, ServiceUnavailableError, StoreTimeoutError } from '../../src/errors';
import { MAX_WAITING_UNITS } from '../../src/store/postgres/group-commit';
import type { PgStore } from '../../src/store/postgres/pg-store';
import type { StoreTransaction } from '../../src/store/store';
import { accountKey } from '../../src/store/records';
import type { UnitOfWork } from '../../src/store/unit/unit-of-work';
import { fixtureSeed, TOKENS } from '../helpers/fixtures';
import { openEmptyPgStore, sql, TEST_DATABASE_URL, warnIfNoDatabase, workerSchema } from '../helpers/postgres';
import { waitFor } from '../helpers/wait';

warnIfNoDatabase();

const ACTIVE = TOKENS.active.token_id; // 1000.00
const AT_D2 = TOKENS.atD2.token_id; // 80.00
const FREEZED = TOKENS.freezed.token_id; // 50.00

type Work<T = unknown> = (tx: StoreTransaction) => Promise<T>;

async function balanceOf(tokenId: string): Promise<number> {
  return Number((await sql('SELECT balance FROM tokens WHERE token_id = $1', [tokenId])).rows[0].balance);
}

/** Adds `cents` to the ACME token's balance in the unit. */
function credit(tokenId: string, cents: number): Work<number> {
  return async (tx) => {
    const token = await tx.tokenForUpdate('ACME', tokenId);
    if (!token) throw new Error(`no token ${tokenId}`);
    await tx.saveToken({ ...token, balance: token.balance + cents });
    return token.balance;
  };
}

/** Counts how often the store ran the work: a batch that runs again runs every unit again. */
function counted<T>(work: Work<T>): { work: Work<T>; runs: () => number } {
  let runs = 0;
  return {
    work: (tx) => {
      runs += 1;
      return work(tx);
    },
    runs: () => runs,
  };
}

/** Sessions waiting on the session `pid`, or on one that waits on it (the database is shared with other tests). */
async function sessionsWaitingOn(pid: number): Promise<number> {
  const { rows } = await sql(
    `WITH RECURSIVE waiting (pid) AS (
       SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))
       UNION SELECT a.pid FROM pg_stat_activity a JOIN waiting w ON w.pid = ANY (pg_blocking_pids(a.pid)))
     SELECT count(*) FROM waiting`,
    [pid],
  );
  return Number(rows[0].count);
}

(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL group commit', () => {
  let store: PgStore;
  beforeEach(async () => {
    store = await openEmptyPgStore();
    await store.loadSeed(fixtureSeed());
  });
  afterEach(() => store.close());

  /**
   * The units as one batch: a first unit that does nothing is in flight while they are queued, so they all
   * form the next batch (an idle store runs a unit at once, alone).
   */
  function inOneBatch<T>(works: Array<Work<T>>): Promise<Array<PromiseSettledResult<T>>> {
    const opener = store.transaction(async () => undefined);
    return Promise.all([opener, Promise.allSettled(works.map((work) => store.transaction(work)))]).then(([, settled]) => settled);
  }

  it('applies units on the same token in arrival order, each seeing the ones before, in one batch', async () => {
    const settled = await inOneBatch(Array.from({ length: 8 }, () => credit(ACTIVE, 1)));
    expect(settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : outcome.reason))).toEqual([
      100000, 100001, 100002, 100003, 100004, 100005, 100006, 100007,
    ]);
    expect(store.batchSizes()).toMatchObject({ largest: 8 });
    expect(await balanceOf(ACTIVE)).toBe(100008);
  });

  it('waits for the callers a batch answered, as they come back over several turns of the event loop, and takes them in one batch', async () => {
    await inOneBatch(Array.from({ length: 4 }, () => credit(ACTIVE, 1)));
    const comingBack: Array<Promise<number>> = [];
    for (let caller = 0; caller < 4; caller += 1) {
      comingBack.push(store.transaction(credit(AT_D2, 1)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(comingBack)).toEqual([8000, 8001, 8002, 8003]);
    expect(store.batchSizes()).toEqual({ batches: 3, units: 9, largest: 4, bySize: { '1': 1, '7': 2 } });
  });

  it('keeps no write of a unit that throws, while its batch-mates commit, and a later unit on its token sees the token as it was', async () => {
    const refused: Work = async (tx) => {
      await credit(ACTIVE, 500)(tx);
      throw new ConflictError('refused by its rules', 'test_refusal');
    };
    const settled = await inOneBatch([refused, credit(ACTIVE, 1), credit(AT_D2, 5)]);
    expect(settled[0]).toEqual({ status: 'rejected', reason: expect.objectContaining({ reason: 'test_refusal' }) });
    expect(settled.slice(1)).toEqual([
      { status: 'fulfilled', value: 100000 },
      { status: 'fulfilled', value: 8000 },
    ]);
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2)]).toEqual([100001, 8005]);
  });

  it('answers a refusal only once its batch-mates are committed', async () => {
    const refused: Work = async (tx) => {
      await tx.tokenForUpdate('ACME', FREEZED);
      throw new ConflictError('refused by its rules', 'test_refusal');
    };
    const opener = store.transaction(async () => undefined);
    const balanceWhenRefused = store.transaction(refused).catch(() => balanceOf(AT_D2));
    const credited = store.transaction(credit(AT_D2, 5));
    await Promise.all([opener, credited]);
    expect(await balanceWhenRefused).toBe(8005);
  });

  it("creates a booking and changes it in one batch: the second unit sees the first one's booking", async () => {
    const [booking] = fixtureSeed().bookings;
    const fresh = { ...booking, bookingId: 'B-NEW', status: 'active' as const };
    const create: Work = async (tx) => {
      expect(await tx.bookingForUpdate('ACME', 'B-NEW')).toBeUndefined();
      await tx.createBooking(fresh);
    };
    const cancel: Work = async (tx) => {
      const seen = await tx.bookingForUpdate('ACME', 'B-NEW');
      if (!seen) throw new Error("the batch-mate's booking is not seen");
      await tx.saveBooking({ ...seen, status: 'cancelled' });
    };
    const settled = await inOneBatch([create, cancel]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
    expect((await sql("SELECT status FROM bookings WHERE booking_id = 'B-NEW'")).rows).toEqual([{ status: 'cancelled' }]);
    expect((await sql("SELECT bookings FROM account_holdings WHERE source_id = 'ACME'")).rows).toEqual([{ bookings: '2' }]);
  });

  it("runs two units that wait on each other's rows each alone, rather than never", async () => {
    const both =
      (first: string, second: string): Work =>
      async (tx) => {
        const a = await tx.tokenForUpdate('ACME', first);
        const b = await tx.tokenForUpdate('ACME', second);
        if (!a || !b) throw new Error('no token');
        await tx.saveToken({ ...a, balance: a.balance + 1 });
        await tx.saveToken({ ...b, balance: b.balance + 1 });
      };
    const settled = await inOneBatch([both(ACTIVE, AT_D2), both(AT_D2, ACTIVE)]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2)]).toEqual([100002, 8002]);
  });

  it("a unit that reads holdings after a batch-mate counted a key without reading them sees the database's counts plus that key", async () => {
    const before = await store.transaction((tx) => tx.holdingsForUpdate('ACME'));
    const now = new Date('2026-01-01T00:00:00.000Z');
    // A key recorded without a look at the holdings (as when MAX_KEYS_PER_ACCOUNT is 0), done in the batch's first turn.
    const counting: Work = (tx) =>
      tx.recordKeyedRequest({ sourceId: 'ACME', key: 'k-count', fingerprint: 'f', response: '{}', createdAt: now });
    // Reads the holdings in a later round trip, once the first unit's writes are the batch's.
    const checking: Work = async (tx) => {
      await tx.tokenForUpdate('ACME', ACTIVE);
      return tx.holdingsForUpdate('ACME');
    };
    const settled = await inOneBatch([counting, checking]);
    expect(settled[1]).toEqual({ status: 'fulfilled', value: { ...before, keys: before.keys + 1 } });
  });

  it('defers a unit that awaits something other than its transaction, so its batch-mates commit, and fails it alone with its writes dropped', async () => {
    const never = new Promise<void>(() => undefined);
    const stalling = counted<unknown>(async (tx) => {
      await credit(FREEZED, 1)(tx);
      await never;
    });
    const settled = await inOneBatch([stalling.work, credit(ACTIVE, 1)]);
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 100_000 });
    expect(settled[0]).toEqual({ status: 'rejected', reason: new Error('a unit of work awaited something other than its transaction') });
    // Once in the batch, once alone; neither kept its write.
    expect(stalling.runs()).toBe(2);
    expect([await balanceOf(FREEZED), await balanceOf(ACTIVE)]).toEqual([5000, 100_001]);
  });

  it('runs a batch that lost a race on a unique key again, then each unit alone, so only the unit at fault fails', async () => {
    // The unit stages a token id another account holds past the unit's own check, as when another instance created it
    // after the batch read it: the unique key refuses it at COMMIT.
    const clash = counted<unknown>(async (tx) => {
      const token = { tokenId: TOKENS.others.token_id, sourceId: 'ACME', destinationId: 'D1', status: 'active' as const, balance: 0 };
      (tx as UnitOfWork).staged.create('tokens', accountKey('ACME', token.tokenId), token);
    });
    const innocent = counted<unknown>(credit(AT_D2, 1));
    const settled = await inOneBatch([clash.work, innocent.work]);
    expect(settled[0]).toEqual({ status: 'rejected', reason: expect.objectContaining({ reason: 'in_flight' }) });
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 8000 });
    // Three batches, then alone: the innocent unit once (it commits), the clashing one three times.
    expect([clash.runs(), innocent.runs()]).toEqual([6, 4]);
    expect(await balanceOf(AT_D2)).toBe(8001);
    expect((await sql('SELECT source_id FROM tokens WHERE token_id = $1', [TOKENS.others.token_id])).rows).toEqual([
      { source_id: 'OTHER' },
    ]);
  });

  it("fails the whole batch when a unit's writes break an invariant as the batch takes them in: no unit's writes commit", async () => {
    // Both units stage one request key past the unit's rules (which would find it); the second also credits a token,
    // a kind the batch takes in before request keys.
    const key = { sourceId: 'ACME', key: 'k-twice', fingerprint: 'f', response: '{}', createdAt: new Date('2026-01-01T00:00:00.000Z') };
    const stageKey = (tx: StoreTransaction) => (tx as UnitOfWork).staged.create('keyedRequests', accountKey('ACME', key.key), key);
    const settled = await inOneBatch<unknown>([
      async (tx) => stageKey(tx),
      async (tx) => {
        await credit(ACTIVE, 1)(tx);
        stageKey(tx);
      },
    ]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await balanceOf(ACTIVE)).toBe(100000);
    expect((await sql("SELECT key FROM keyed_requests WHERE key = 'k-twice'")).rows).toEqual([]);
  });

  it('checks every write of a batch by its row count: a save that matches no row fails that unit alone, rather than vanish', async () => {
    // A save staged past the unit's rules (which find no such token first), as of a row gone since it was read.
    const savesNothing: Work = async (tx) => {
      const token = { ...(await tx.tokenForUpdate('ACME', ACTIVE))!, tokenId: '999' };
      (tx as UnitOfWork).staged.save('tokens', accountKey('ACME', '999'), token);
    };
    const settled = await inOneBatch<unknown>([savesNothing, credit(AT_D2, 1)]);
    expect(settled[0]).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: 'P0004' }) });
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 8000 });
    expect(await balanceOf(AT_D2)).toBe(8001);
  });

  it("runs each unit alone when the database refuses a batch's statement for another reason, so one bad unit cannot fail the others", async () => {
    // Past the balance's CHECK constraint, staged past the unit's rules (which refuse it first): the database refuses the batch's writes.
    const overflowing = counted(async (tx) => {
      const token = (await tx.tokenForUpdate('ACME', ACTIVE))!;
      (tx as UnitOfWork).staged.save('tokens', accountKey('ACME', ACTIVE), { ...token, balance: token.balance + 1e13 });
      return token.balance;
    });
    const innocent = counted<unknown>(credit(AT_D2, 1));
    const settled = await inOneBatch([overflowing.work, innocent.work]);
    expect(settled[0]).toEqual({ status: 'rejected', reason: expect.objectContaining({ code: '23514' }) });
    expect(settled[1]).toEqual({ status: 'fulfilled', value: 8000 });
    expect([overflowing.runs(), innocent.runs()]).toEqual([2, 2]);
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2)]).toEqual([100000, 8001]);
  });

  it('keys, deliveries and ledger rows written by one unit are what its batch-mates find', async () => {
    const now = new Date('2026-01-02T00:00:00.000Z');
    // A SHA-256 digest's 32 bytes, with those an array literal would escape (backslash, quote, comma, braces), and 0 and 255.
    const DIGEST = Buffer.concat([Buffer.from([0, 92, 34, 44, 123, 125, 255]), Buffer.alloc(25, 7)]);
    // As the services do: each key looked up (which holds it for the unit) before anything is recorded under it.
    const record: Work = async (tx) => {
      expect(await tx.findKeyedRequest('ACME', 'k-1')).toBeUndefined();
      expect(await tx.findDelivery('ACME', 'msg_1')).toBeUndefined();
      await tx.recordKeyedRequest({ sourceId: 'ACME', key: 'k-1', fingerprint: 'f', response: '{"a":1}', createdAt: now });
      await tx.recordDelivery({ sourceId: 'ACME', webhookId: 'msg_1', bodyDigest: DIGEST, response: '{"b":2}', receivedAt: now });
      const [token] = await tx.lockTokenAndFindLedgerEntry('ACME', ACTIVE, '00000000000000000001');
      await tx.recordLedgerEntry({
        kind: 'withdrawal',
        transactionId: '00000000000000000001',
        sourceId: 'ACME',
        destinationId: 'D1',
        tokenId: ACTIVE,
        amount: 1,
        fee: 0,
        tokenBalance: (token?.balance ?? 0) - 1,
        createdAt: now,
      });
    };
    const find: Work = async (tx) => [
      await tx.findKeyedRequest('ACME', 'k-1'),
      await tx.findDelivery('ACME', 'msg_1'),
      (await tx.lockTokenAndFindLedgerEntry('ACME', AT_D2, '00000000000000000001'))[1],
    ];
    const settled = await inOneBatch([record, find]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: undefined });
    expect(settled[1]).toEqual({
      status: 'fulfilled',
      value: [
        { sourceId: 'ACME', key: 'k-1', fingerprint: 'f', response: '{"a":1}', createdAt: now },
        { sourceId: 'ACME', webhookId: 'msg_1', bodyDigest: DIGEST, response: '{"b":2}', receivedAt: now },
        expect.objectContaining({ transactionId: '00000000000000000001', tokenId: ACTIVE, amount: 1 }),
      ],
    });
    // And as the database keeps them, the bytes of the digest included.
    expect((await sql("SELECT body_digest FROM deliveries WHERE webhook_id = 'msg_1'")).rows).toEqual([{ body_digest: DIGEST }]);
    const again = await store.transaction(find);
    expect(again).toEqual([
      { sourceId: 'ACME', key: 'k-1', fingerprint: 'f', response: '{"a":1}', createdAt: now },
      { sourceId: 'ACME', webhookId: 'msg_1', bodyDigest: DIGEST, response: '{"b":2}', receivedAt: now },
      expect.objectContaining({ transactionId: '00000000000000000001' }),
    ]);
  });

  it("locks a batch's rows of every kind in one order, whatever order its units asked in: two instances do not deadlock", async () => {
    // Two more instances on the same schema (opening one empties the tables: the seed again), each running its
    // units as batches of one: they wait for the blocker as long as it holds on (a batch of many would give up
    // after 250 ms and run its units again, alone), and lock in the same order as a batch of many.
    const one = await openEmptyPgStore({ poolSize: 4, groupCommit: false });
    const second = await openEmptyPgStore({ poolSize: 4, groupCommit: false });
    await second.loadSeed(fixtureSeed());
    // Another session holds the account's holdings row, so each instance's round trip of locks stops there, or
    // before it, in the order it asked: the first asks holdings then a token, the second the token then holdings.
    const blocker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT * FROM account_holdings WHERE source_id = 'ACME' FOR UPDATE");
      const blockerPid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      const lockWaits = () => sessionsWaitingOn(blockerPid);
      const holdingsFirst = counted<unknown>(async (tx) => Promise.all([tx.holdingsForUpdate('ACME'), tx.tokenForUpdate('ACME', ACTIVE)]));
      const tokenFirst = counted<unknown>(async (tx) => Promise.all([tx.tokenForUpdate('ACME', ACTIVE), tx.holdingsForUpdate('ACME')]));
      const first = one.transaction(holdingsFirst.work);
      await waitFor(async () => (await lockWaits()) >= 1);
      const other = second.transaction(tokenFirst.work);
      await waitFor(async () => (await lockWaits()) >= 2);
      await blocker.query('COMMIT');
      await Promise.all([first, other]);
      // A deadlock would have made PostgreSQL abort one of them, and its batch run again.
      expect([holdingsFirst.runs(), tokenFirst.runs()]).toEqual([1, 1]);
    } finally {
      await blocker.end();
      await Promise.all([one.close(), second.close()]);
    }
  });

  it('fails every unit of a batch the database cannot write at all (out of disk) with 503 at once, rather than again each alone', async () => {
    // As a full disk answers a write that needs a new page: SQLSTATE 53100.
    await sql(`CREATE FUNCTION refuse_for_want_of_disk() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END $$`);
    await sql('CREATE TRIGGER disk_full BEFORE UPDATE ON tokens FOR EACH STATEMENT EXECUTE FUNCTION refuse_for_want_of_disk()');
    try {
      const units = [counted(credit(ACTIVE, 1)), counted(credit(AT_D2, 1))];
      const settled = await inOneBatch(units.map((unit) => unit.work));
      expect(settled.map((outcome) => outcome.status === 'rejected' && outcome.reason instanceof ServiceUnavailableError)).toEqual([
        true,
        true,
      ]);
      expect(units.map((unit) => unit.runs())).toEqual([1, 1]);
    } finally {
      await sql('DROP TRIGGER disk_full ON tokens');
      await sql('DROP FUNCTION refuse_for_want_of_disk()');
    }
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2)]).toEqual([100000, 8000]);
  });

  it("runs each unit alone when a batch's statement times out: a unit waiting on a row another transaction holds answers 504, its batch-mate commits", async () => {
    const impatient = await openEmptyPgStore({ statementTimeoutMs: 300 });
    await impatient.loadSeed(fixtureSeed());
    const blocker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT * FROM tokens WHERE token_id = $1 FOR UPDATE', [ACTIVE]);
      const opener = impatient.transaction(async () => undefined);
      const settled = await Promise.allSettled([impatient.transaction(credit(ACTIVE, 1)), impatient.transaction(credit(AT_D2, 1)), opener]);
      expect(settled[0]).toEqual({ status: 'rejected', reason: expect.any(StoreTimeoutError) });
      expect(settled[1]).toEqual({ status: 'fulfilled', value: 8000 });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
      await impatient.close();
    }
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2)]).toEqual([100000, 8001]);
  });
  it('lets a unit that waits on a row held elsewhere wait alone: the batches after it commit meanwhile, and it commits once the row is free', async () => {
    const blocker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT * FROM tokens WHERE token_id = $1 FOR UPDATE', [ACTIVE]);
      let waitingUnitSettled = false;
      const opener = store.transaction(async () => undefined);
      const waiting = store.transaction(credit(ACTIVE, 1)).finally(() => {
        waitingUnitSettled = true;
      });
      await Promise.all([opener, store.transaction(credit(AT_D2, 1))]);
      // Batches that come later commit while the row is still held (the statement timeout here is 5 s).
      expect(await store.transaction(credit(FREEZED, 1))).toBe(5000);
      expect(waitingUnitSettled).toBe(false);
      await blocker.query('ROLLBACK');
      expect(await waiting).toBe(100000);
    } finally {
      await blocker.end();
    }
    expect([await balanceOf(ACTIVE), await balanceOf(AT_D2), await balanceOf(FREEZED)]).toEqual([100001, 8001, 5001]);
  });

  it("a throw of its own outside a batch (here the batch-size observer) fails that batch's units, and the next batch still runs", async () => {
    let observed = 0;
    const observing = await openEmptyPgStore({
      observeBatch: () => {
        observed += 1;
        if (observed === 1) throw new Error('the observer broke');
      },
    });
    try {
      await observing.loadSeed(fixtureSeed());
      await expect(observing.transaction(credit(ACTIVE, 1))).rejects.toThrow('the observer broke');
      expect(await observing.transaction(credit(ACTIVE, 1))).toBe(100000);
    } finally {
      await observing.close();
    }
    expect(await balanceOf(ACTIVE)).toBe(100001);
  });

  it('refuses a unit with 503 at once when MAX_WAITING_UNITS already wait, and runs every unit queued before it', async () => {
    // All queued in one turn: the first starts a batch at once, the next MAX_WAITING_UNITS wait, the last finds no room.
    const settled = await Promise.allSettled(Array.from({ length: MAX_WAITING_UNITS + 2 }, () => store.transaction(async () => 'ran')));
    const refused = settled.flatMap((outcome, i) => (outcome.status === 'rejected' ? [[i, outcome.reason] as const] : []));
    expect(refused).toEqual([[MAX_WAITING_UNITS + 1, expect.any(ServiceUnavailableError)]]);
  });

  it('runs the units of a refused batch alone one less at a time than the pool holds, so the next batch keeps a connection', async () => {
    const small = await openEmptyPgStore({ poolSize: 2 });
    try {
      await small.loadSeed(fixtureSeed());
      // Past the balance's CHECK constraint, staged past the unit's rules (which refuse it first): the batch is
      // refused, and each unit runs again alone.
      let aloneNow = 0;
      let mostAloneAtOnce = 0;
      const overflowing: Work<number> = async (tx) => {
        const token = (await tx.tokenForUpdate('ACME', ACTIVE))!;
        (tx as UnitOfWork).staged.save('tokens', accountKey('ACME', ACTIVE), { ...token, balance: token.balance + 1e13 });
        return token.balance;
      };
      const units = Array.from({ length: 10 }, (_, i) => counted(i === 0 ? overflowing : credit(AT_D2, 1)));
      const alone = units.map(({ work, runs }) => async (tx: StoreTransaction) => {
        if (runs() >= 1) {
          aloneNow += 1;
          mostAloneAtOnce = Math.max(mostAloneAtOnce, aloneNow);
        }
        return work(tx);
      });
      const opener = small.transaction(async () => undefined);
      const settled = await Promise.allSettled(
        alone.map((work, i) =>
          small.transaction(work).finally(() => {
            if (units[i].runs() > 1) aloneNow -= 1;
          }),
        ),
      );
      await opener;
      expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', ...Array<string>(9).fill('fulfilled')]);
      expect(units.map((unit) => unit.runs())).toEqual(Array<number>(10).fill(2));
      expect(mostAloneAtOnce).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('stops a unit waiting on an in-batch lock when its batch fails: it does not run on against the failed batch, only again alone', async () => {
    const blocker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT * FROM account_holdings WHERE source_id = 'ACME' FOR UPDATE");
      // The first unit locks the token, then waits on the holdings the blocker holds, past the batch's lock wait.
      const locking = counted<unknown>(async (tx) => {
        await tx.tokenForUpdate('ACME', ACTIVE);
        return tx.holdingsForUpdate('ACME');
      });
      // The second waits on the first's in-batch lock of the token, which the batch has already read.
      let pastItsRead = 0;
      const waiting = counted<unknown>(async (tx) => {
        const token = await tx.tokenForUpdate('ACME', ACTIVE);
        pastItsRead += 1;
        if (!token) throw new Error('no token');
        await tx.saveToken({ ...token, balance: token.balance + 1 });
        return token.balance;
      });
      const opener = store.transaction(async () => undefined);
      const first = store.transaction(locking.work);
      const second = store.transaction(waiting.work);
      // The batch gave up on the holdings after its lock wait: both units run again, alone.
      await waitFor(async () => locking.runs() === 2 && waiting.runs() === 2);
      await blocker.query('COMMIT');
      await Promise.all([opener, first]);
      expect(await second).toBe(100000);
      expect([locking.runs(), waiting.runs(), pastItsRead]).toEqual([2, 2, 1]);
    } finally {
      await blocker.end();
    }
    expect(await balanceOf(ACTIVE)).toBe(100001);
  });

  it('never waits for a row in a later round trip that comes before one its batch already locked: two instances cannot deadlock across round trips', async () => {
    // Another instance running each unit alone, on the same schema (opening it empties the tables: the seed again).
    const second = await openEmptyPgStore({ poolSize: 2, groupCommit: false });
    await second.loadSeed(fixtureSeed());
    const [booking] = fixtureSeed().bookings;
    await second.transaction((tx) => tx.createBooking({ ...booking, bookingId: '2000' }));
    const blocker = new Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${workerSchema()}` });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT * FROM bookings WHERE source_id = 'ACME' AND booking_id = '1396' FOR UPDATE");
      const blockerPid = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      // The other instance locks the account's holdings, then waits for a booking (here held by the blocker).
      const holdingsThenBooking = second.transaction(async (tx) => {
        await tx.holdingsForUpdate('ACME');
        return tx.bookingForUpdate('ACME', '1396');
      });
      await waitFor(async () => (await sessionsWaitingOn(blockerPid)) >= 1);
      // This instance's batch locks a booking in its first round trip, then wants those holdings in its second:
      // waiting there would close a cycle as soon as the other instance wanted that booking.
      const bookingThenHoldings = counted<unknown>(async (tx) => {
        await tx.bookingForUpdate('ACME', '2000');
        return tx.holdingsForUpdate('ACME');
      });
      const innocent = counted<unknown>(credit(AT_D2, 1));
      const opener = store.transaction(async () => undefined);
      const outOfOrder = store.transaction(bookingThenHoldings.work);
      // The batch-mate commits in the batch: the batch did not wait out its lock wait and fail as a whole.
      expect(await store.transaction(innocent.work)).toBe(8000);
      expect(innocent.runs()).toBe(1);
      await blocker.query('COMMIT');
      await Promise.all([opener, holdingsThenBooking]);
      // The unit that would have waited out of order was deferred, and ran again alone once the holdings were free.
      await outOfOrder;
      expect(bookingThenHoldings.runs()).toBe(2);
    } finally {
      await blocker.end();
      await second.close();
    }
    expect(await balanceOf(AT_D2)).toBe(8001);
  });
});
