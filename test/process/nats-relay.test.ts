import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { changeView } from '../../src/delivery/change-view';
import { DUPLICATE_WINDOW_MS, openNatsSink, type NatsSink, type NatsSinkSettings } from '../../src/delivery/nats-sink';
import type { DeliveryOutcome } from '../../src/delivery/sink';
import type { Change, ChangeType } from '../../src/store/store';
import { captured, capturingLogger } from '../helpers/capture';
import { startServer } from '../helpers/server-process';
import { HAS_NATS_SERVER, noteIfNoNatsServer, readStream, TestNatsServer } from '../helpers/nats-server';
import { waitFor } from '../helpers/wait';

noteIfNoNatsServer();

const STREAM = 'RECEIVER_CHANGES';
const DAY_MS = 24 * 60 * 60 * 1000;
const NEVER_ABORTED = new AbortController().signal;

let seqs = new Map<string, number>();

/** A change as the store hands it to the engine: numbered per account. */
function change(sourceId: string, type: ChangeType = 'token.withdrawn'): Change {
  const seq = (seqs.get(sourceId) ?? 0) + 1;
  seqs.set(sourceId, seq);
  return {
    sourceId,
    seq,
    id: `chg_${randomUUID()}`,
    type,
    createdAt: new Date('2026-11-27T10:00:00.000Z'),
    body: { token: { token_id: '2908926013012565', balance: '900.00' }, request: { operation: 'withdraw', request_id: randomUUID() } },
  };
}

function settingsFor(server: TestNatsServer, overrides: Partial<NatsSinkSettings> = {}): NatsSinkSettings {
  return {
    servers: [`127.0.0.1:${server.port}`],
    tls: false,
    credentials: {},
    stream: STREAM,
    publishTimeoutMs: 2_000,
    maxAgeMs: DAY_MS,
    ...overrides,
  };
}

/** Sends until JetStream takes it: the sink connects in the background, as the engine's retries would wait for it. */
async function sendUntilDelivered(sink: NatsSink, item: Change): Promise<void> {
  let outcome: DeliveryOutcome | undefined;
  await waitFor(async () => {
    outcome = await sink.send(item, NEVER_ABORTED);
    return outcome.result === 'delivered';
  });
}

/** What a consumer should read of a change published on `subject`. */
function asPublished(item: Change, subject: string) {
  return { subject, msgId: item.id, body: JSON.parse(JSON.stringify(changeView(item))) };
}

/** The Nats-Msg-Id of every message in the stream, oldest first. */
async function storedIds(server: TestNatsServer): Promise<Array<string | undefined>> {
  return (await readStream(server)).map((message) => message.msgId);
}

(HAS_NATS_SERVER ? describe : describe.skip)('the NATS relay sink, against nats-server -js (contract section 13.4)', () => {
  let server: TestNatsServer;
  let sink: NatsSink | undefined;
  let client: NatsConnection;
  let manager: JetStreamManager;

  beforeEach(async () => {
    seqs = new Map();
    server = await TestNatsServer.start();
    client = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    manager = await jetstreamManager(client);
  });

  afterEach(async () => {
    await sink?.close();
    sink = undefined;
    await client.close();
    await server.remove();
  });

  it('creates the stream when missing, and publishes each change on its subject, with its id and its JSON, in order', async () => {
    sink = openNatsSink(settingsFor(server), capturingLogger());
    // Made once connected, before any change asks for it.
    await waitFor(() =>
      manager.streams.info(STREAM).then(
        () => true,
        () => false,
      ),
    );
    const sent = [change('PDR28'), change('PDR28', 'booking.created'), change('a.b *>'), change('PDR28', 'token.status_changed')];
    for (const item of sent) await sendUntilDelivered(sink, item);

    const { config } = await manager.streams.info(STREAM);
    expect(config).toMatchObject({
      subjects: ['receiver.changes.>'],
      storage: 'file',
      duplicate_window: DUPLICATE_WINDOW_MS * 1_000_000,
      max_age: DAY_MS * 1_000_000,
    });
    expect((await readStream(server)).map(({ subject, msgId, body }) => ({ subject, msgId, body }))).toEqual([
      asPublished(sent[0], 'receiver.changes.PDR28.token.withdrawn'),
      asPublished(sent[1], 'receiver.changes.PDR28.booking.created'),
      asPublished(sent[2], `receiver.changes.~${Buffer.from('a.b *>').toString('base64url')}.token.withdrawn`),
      asPublished(sent[3], 'receiver.changes.PDR28.token.status_changed'),
    ]);
  });

  it('a re-send of a change is delivered and dropped by the duplicate window: the stream holds it once', async () => {
    sink = openNatsSink(settingsFor(server), capturingLogger());
    const [first, second] = [change('PDR28'), change('PDR28')];
    await sendUntilDelivered(sink, first);
    await sendUntilDelivered(sink, second);

    await expect(sink.send(first, NEVER_ABORTED)).resolves.toMatchObject({ result: 'delivered' });
    expect(await storedIds(server)).toEqual([first.id, second.id]);
  });

  it('keeps a stream ops made as it is, publishes into it, and warns of what differs from the contract', async () => {
    await manager.streams.add({ name: STREAM, subjects: ['receiver.changes.>'], storage: StorageType.Memory, max_msgs: 10 });
    sink = openNatsSink(settingsFor(server), capturingLogger());
    await sendUntilDelivered(sink, change('PDR28'));

    const { config, state } = await manager.streams.info(STREAM);
    expect([config.storage, config.max_msgs, state.messages]).toEqual(['memory', 10, 1]);
    const warning = captured.logLines.map((line) => JSON.parse(line)).find((line) => line.msg.startsWith('NATS stream kept as it is'));
    expect(warning).toMatchObject({ level: 40, sink: 'nats', stream: STREAM, problems: ['it keeps its messages in memory, not on disk'] });
  });

  it('a publish JetStream does not acknowledge fails at its timeout, and goes through once the server answers again', async () => {
    sink = openNatsSink(settingsFor(server, { publishTimeoutMs: 1_000 }), capturingLogger());
    const first = change('PDR28');
    await sendUntilDelivered(sink, first);
    await server.freeze();

    const waiting = change('PDR28');
    const outcome = await sink.send(waiting, NEVER_ABORTED).finally(() => server.thaw());
    expect(outcome).toMatchObject({ result: 'failed', error: expect.stringMatching(/timeout/i) });

    await sendUntilDelivered(sink, waiting);
    expect(await storedIds(server)).toEqual([first.id, waiting.id]);
  });

  it('while NATS is down each attempt fails at once and nothing throws; once it is back the same change is delivered', async () => {
    sink = openNatsSink(settingsFor(server), capturingLogger());
    const first = change('PDR28');
    await sendUntilDelivered(sink, first);
    await server.stop();

    const waiting = change('PDR28');
    // Within the publish timeout (2 s) at worst, whatever the client knows of the lost connection yet.
    const outcome = await sink.send(waiting, NEVER_ABORTED);
    expect(outcome).toMatchObject({ result: 'failed', error: expect.any(String) });
    expect(outcome.durationMs).toBeLessThan(30_000);

    await server.restart();
    await sendUntilDelivered(sink, waiting);
    // The failed attempt may have reached the stream after all (its acknowledgement lost): the re-send is then a duplicate.
    expect(await storedIds(server)).toEqual([first.id, waiting.id]);
  });

  it('started while NATS is down, it fails attempts without throwing, then delivers once NATS comes up', async () => {
    await server.stop();
    sink = openNatsSink(settingsFor(server), capturingLogger());
    await expect(sink.send(change('PDR28'), NEVER_ABORTED)).resolves.toMatchObject({ result: 'failed', error: 'NATS is not connected' });

    await server.restart();
    const item = change('PDR28');
    await sendUntilDelivered(sink, item);
    expect(await storedIds(server)).toEqual([item.id]);
  });
});

(HAS_NATS_SERVER ? describe : describe.skip)('the service with NATS_URL', () => {
  it('starts and serves while NATS is down, makes the stream once NATS is up, and stops cleanly (exit 0)', async () => {
    const nats = await TestNatsServer.start();
    await nats.stop();
    const service = await startServer({ NATS_URL: nats.url });
    try {
      const logged = (message: string) => service.stdout.some((line) => line.includes(`"msg":"${message}`));
      await waitFor(async () => logged('NATS connection failed; changes wait for it'));
      expect((await fetch(`http://127.0.0.1:${service.port}/readyz`)).status).toBe(200);

      await nats.restart();
      await waitFor(async () => logged('NATS stream created'));
      const client = await connect({ servers: nats.url });
      const { config } = await (await jetstreamManager(client)).streams.info(STREAM);
      await client.close();
      expect(config.subjects).toEqual(['receiver.changes.>']);

      service.child.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);
    } finally {
      service.child.kill('SIGKILL');
      await nats.remove();
    }
  });
});

describe('without NATS_URL', () => {
  it('no module of @nats-io is loaded (with it, the client is)', () => {
    const modulesLoaded = (natsUrl: string) => {
      const script = [
        "const { loadConfig } = require('./src/process/config');",
        "const { openNatsRelay } = require('./src/delivery/nats-sink');",
        "const { createLogger } = require('./src/process/logger');",
        `const relay = openNatsRelay(loadConfig({ NATS_URL: '${natsUrl}' }), createLogger('silent'));`,
        "console.log(Object.keys(require.cache).filter((file) => file.includes('@nats-io')).length);",
        'void relay?.close();',
      ].join('\n');
      const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: path.resolve(__dirname, '..', '..'),
        env: { PATH: process.env.PATH ?? '' },
        encoding: 'utf8',
      });
      return Number(output.trim());
    };
    expect(modulesLoaded('')).toBe(0);
    expect(modulesLoaded('nats://127.0.0.1:9')).toBeGreaterThan(5);
  });
});
