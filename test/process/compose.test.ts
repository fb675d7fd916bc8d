import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const PODMAN_COMPOSE = '/usr/bin/podman-compose';
const installed = spawnSync(PODMAN_COMPOSE, ['--version']).status === 0;
if (!installed)
  process.stderr.write(`${PODMAN_COMPOSE} not found: the compose file test is SKIPPED (apt-get install podman-compose, as .ci/run does)\n`);

/** What podman and Docker give a container to stop in when nothing else says: `podman stop`'s and `docker stop`'s 10 s. */
const DEFAULT_STOP_TIMEOUT_MS = 10_000;

/**
 * Contract section 12, issues 30 and 42: the whole stack in one file, which podman-compose (Debian's 1.0.3) reads.
 * Running it (up, a request through each receiver, a stop with nothing lost) is scripts/docker-smoke.sh's, which CI
 * runs: it builds the images this file's dry run only names.
 */
(installed ? describe : describe.skip)('docker-compose.yml, read by podman-compose', () => {
  // A project of its own: podman-compose makes the volume and network even when it only prints the containers.
  const project = `receiver-compose-test-${process.pid}`;
  afterAll(() => {
    spawnSync('/usr/bin/podman', ['volume', 'rm', '--force', `${project}_pgdata`, `${project}_natsdata`]);
    spawnSync('/usr/bin/podman', ['network', 'rm', '--force', `${project}_default`]);
  });

  /** The commands `podman-compose up` would run, with only the environment given (no compose variable of the caller's). */
  function dryRunUp(variables: Record<string, string> = {}) {
    const printed = execFileSync(PODMAN_COMPOSE, ['-p', project, '--dry-run', 'up'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...(process.env.CONTAINERS_CONF && { CONTAINERS_CONF: process.env.CONTAINERS_CONF }),
        ...variables,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    const created = printed.split('\n').filter((line) => line.startsWith('podman create '));
    const service = (name: string) => created.find((line) => line.includes(`--name=${project}_${name}_1 `)) ?? `no container for ${name}`;
    const builds = printed.split('\n').filter((line) => line.startsWith('podman build '));
    return { created, service, builds };
  }

  let defaults: ReturnType<typeof dryRunUp>;
  beforeAll(() => {
    defaults = dryRunUp();
  }, 150_000);

  it('makes two receivers after the migrations, PostgreSQL, Redis and NATS, images pinned and named in full, each receiver named and its metrics port', () => {
    const { created, service, builds } = defaults;
    expect(created).toHaveLength(6);
    expect(service('postgres')).toMatch(/ docker\.io\/library\/postgres:16\.\d+-bookworm$/);
    expect(service('redis')).toMatch(/ docker\.io\/library\/redis:7\.\d+\.\d+-bookworm redis-server/);
    // JetStream on, its store on a volume (contract section 13.4: the stream keeps its messages on disk).
    expect(service('nats')).toMatch(
      / -v receiver-compose-test-\d+_natsdata:\/data .* docker\.io\/library\/nats:2\.\d+\.\d+-alpine nats-server --jetstream --store_dir \/data /,
    );
    expect(service('migrate')).toMatch(/ localhost\/receiver:latest node dist\/cli\/migrate\.js --wait 120$/);
    for (const [name, port, metricsPort] of [
      ['receiver-a', 3000, 9464],
      ['receiver-b', 3001, 9465],
    ] as const) {
      expect(service(name)).toContain(`-e INSTANCE_ID=${name} `);
      expect(service(name)).toContain('-e REDIS_URL=redis://redis:6379 ');
      expect(service(name)).toContain('-e NATS_URL=nats://nats:4222 ');
      expect(service(name)).toContain(`-p ${port}:3000 -p 127.0.0.1:${metricsPort}:9464 `);
    }
    expect(builds[0]).toMatch(/ --build-arg BASE=docker\.io\/library\/node:24\.\d+\.\d+-bookworm-slim /);
  });

  it('gives PostgreSQL, Redis and both receivers a restart policy, and the one-shot migration none', () => {
    const { service } = defaults;
    for (const name of ['postgres', 'redis', 'nats', 'receiver-a', 'receiver-b'])
      expect(service(name)).toContain(' --restart unless-stopped ');
    expect(service('migrate')).toContain(' --restart no ');
  });

  it('names the images and ports by its variables: the stack run offline on local images, or beside another on free ports', () => {
    const { service, builds } = dryRunUp({
      NODE_BASE_IMAGE: 'localhost/receiver-base:node24-bookworm',
      POSTGRES_IMAGE: 'localhost/receiver-postgres:15-bookworm',
      REDIS_IMAGE: 'localhost/receiver-redis:7-bookworm',
      NATS_IMAGE: 'localhost/receiver-nats:2.9-bookworm',
      RECEIVER_IMAGE: 'localhost/receiver:compose-test',
      RECEIVER_A_PORT: '40001',
      RECEIVER_A_METRICS_PORT: '40002',
      RECEIVER_B_PORT: '40003',
      RECEIVER_B_METRICS_PORT: '40004',
      RECEIVER_VERSION: '1.2.3',
      RECEIVER_REVISION: 'abc123',
      RECEIVER_SOURCE: 'https://example.com/receiver.git',
    });
    expect(service('postgres')).toMatch(/ localhost\/receiver-postgres:15-bookworm$/);
    expect(service('redis')).toMatch(/ localhost\/receiver-redis:7-bookworm redis-server/);
    expect(service('nats')).toMatch(/ localhost\/receiver-nats:2\.9-bookworm nats-server /);
    expect(service('receiver-a')).toContain('-p 40001:3000 -p 127.0.0.1:40002:9464 ');
    expect(service('receiver-b')).toMatch(/-p 40003:3000 -p 127.0.0.1:40004:9464 .* localhost\/receiver:compose-test$/);
    expect(builds[0]).toContain(
      '-t localhost/receiver:compose-test -f ./Dockerfile --build-arg BASE=localhost/receiver-base:node24-bookworm ' +
        '--build-arg VERSION=1.2.3 --build-arg REVISION=abc123 --build-arg SOURCE=https://example.com/receiver.git ',
    );
  });

  it("passes no stop timeout (stop_grace_period is dropped), so the image's drain limit fits in the runtimes' default 10 s", () => {
    const { service } = defaults;
    expect(service('receiver-a')).not.toContain('--stop-timeout');
    const imageSetting = /^ENV SHUTDOWN_TIMEOUT_MS=(\d+)$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    // Not set in the image: the service's own default, 10 s.
    const imageDrainLimitMs = Number(imageSetting?.[1] ?? 10_000);
    expect(imageDrainLimitMs).toBeLessThan(DEFAULT_STOP_TIMEOUT_MS);
  });
});
