import { EventLog, type OperationEvent } from '../../src/process/event-log';

const event = (n: number, overrides: Partial<OperationEvent> = {}): OperationEvent => ({
  time: `2026-01-01T00:00:0${n}.000Z`,
  request_id: `r${n}`,
  method: 'POST',
  route: '/v1/tokens/withdraw',
  operation: 'withdraw',
  status: 200,
  outcome: 'accepted',
  ...overrides,
});

describe('EventLog', () => {
  it('keeps only the most recent events, however many are recorded', () => {
    const log = new EventLog(3);
    for (let n = 1; n <= 8; n += 1) log.record(event(n));
    expect(log.list({ limit: 10 }).map((e) => e.request_id)).toEqual(['r8', 'r7', 'r6']);
  });

  it('filters before limiting, newest first', () => {
    const log = new EventLog(10);
    log.record(event(1, { source_id: 'A', outcome: 'rejected' }));
    log.record(event(2, { source_id: 'B' }));
    log.record(event(3, { source_id: 'A' }));
    log.record(event(4, { source_id: 'A', token_id: '7' }));
    expect(log.list({ source_id: 'A', limit: 2 }).map((e) => e.request_id)).toEqual(['r4', 'r3']);
    expect(log.list({ outcome: 'rejected', limit: 10 }).map((e) => e.request_id)).toEqual(['r1']);
    expect(log.list({ token_id: '7', limit: 10 }).map((e) => e.request_id)).toEqual(['r4']);
  });

  it("keeps each account's newest apart: no flood of another account's or of unauthenticated requests pushes them out", () => {
    const log = new EventLog(2);
    log.record(event(1, { source_id: 'A' }));
    log.record(event(2, { source_id: 'A' }));
    for (let n = 3; n <= 9; n += 1) log.record(event(n, n % 2 ? { source_id: 'B' } : {}));
    expect(log.list({ source_id: 'A', limit: 10 }).map((e) => e.request_id)).toEqual(['r2', 'r1']);
    expect(log.list({ limit: 10 }).map((e) => e.request_id)).toEqual(['r9', 'r8', 'r7', 'r6', 'r2', 'r1']);
  });

  it('is empty at first', () => {
    expect(new EventLog(5).list({ limit: 5 })).toEqual([]);
  });
});
