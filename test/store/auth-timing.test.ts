import type { AddressInfo } from 'node:net';
import { describeOnEveryStore } from '../helpers/app';
import { withdrawal } from '../helpers/payloads';

const SAMPLES = 300;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Finding 7 of issue 13: a 401 must not tell a known account from an unknown one by its time. Interleaved
 * samples on one keep-alive connection, medians compared. The bound is generous (the machine is shared); the
 * figures are printed for the record.
 */
describeOnEveryStore('401 timing', (current) => {
  it(`a wrong key for a known account and an unknown account take the same median time (${SAMPLES} samples each)`, async () => {
    const { server } = current();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/tokens/withdraw`;
    const send = async (body: object) => {
      const started = process.hrtime.bigint();
      const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      await response.arrayBuffer();
      expect(response.status).toBe(401);
      return Number(process.hrtime.bigint() - started) / 1000;
    };
    const known = withdrawal({ share_public: 'pk_wrong_key_000' });
    const unknown = withdrawal({ source_id: 'NOBODY01', share_public: 'pk_wrong_key_000' });
    try {
      for (let i = 0; i < 20; i += 1) await send(i % 2 ? known : unknown);
      const times = { known: [] as number[], unknown: [] as number[] };
      for (let i = 0; i < SAMPLES; i += 1) {
        times.known.push(await send(known));
        times.unknown.push(await send(unknown));
      }
      const medians = { known: median(times.known), unknown: median(times.unknown) };
      const difference = Math.abs(medians.known - medians.unknown) / Math.max(medians.known, medians.unknown);
      process.stdout.write(`401 timing: median ${medians.known.toFixed(0)} µs known account, ${medians.unknown.toFixed(0)} µs unknown, ${(difference * 100).toFixed(1)}% apart\n`);
      // The oracle this closes was a 50% gap; the target is under 10%.
      expect(difference).toBeLessThan(0.25);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
