import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const PODMAN_COMPOSE = '/usr/bin/podman-compose';
const installed = spawnSync(PODMAN_COMPOSE, ['--version']).status === 0;
if (!installed)
  process.stderr.write(`${PODMAN_COMPOSE} not found: the compose file test is SKIPPED (apt-get install podman-compose, as .ci/run does)\n`);

/** Contract section 12 and issue 30: the whole stack in one file, which podman-compose (Debian's 1.0.3) reads. */
(installed ? describe : describe.skip)('docker-compose.yml, read by podman-compose', () => {
  // A project of its own: podman-compose makes the volume and network even when it only prints the containers.
  const project = `receiver-compose-test-${process.pid}`;
  afterAll(() => {
    spawnSync('/usr/bin/podman', ['volume', 'rm', '--force', `${project}_pgdata`]);
    spawnSync('/usr/bin/podman', ['network', 'rm', '--force', `${project}_default`]);
  });

  it('makes two receivers after the migrations, PostgreSQL and Redis, images named in full, each receiver named and its metrics port', () => {
    const printed = execFileSync(PODMAN_COMPOSE, ['-p', project, '--dry-run', 'up'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    const created = printed.split('\n').filter((line) => line.startsWith('podman create '));
    const service = (name: string) => created.find((line) => line.includes(`--name=${project}_${name}_1 `)) ?? `no container for ${name}`;
    expect(created).toHaveLength(5);
    expect(service('postgres')).toMatch(/ docker\.io\/library\/postgres:16-bookworm$/);
    expect(service('redis')).toMatch(/ docker\.io\/library\/redis:7-bookworm redis-server/);
    expect(service('migrate')).toMatch(/ localhost\/receiver:latest node dist\/cli\/migrate\.js$/);
    for (const [name, port, metricsPort] of [
      ['receiver-a', 3000, 9464],
      ['receiver-b', 3001, 9465],
    ] as const) {
      expect(service(name)).toContain(`-e INSTANCE_ID=${name} `);
      expect(service(name)).toContain('-e REDIS_URL=redis://redis:6379 ');
      expect(service(name)).toContain(`-p ${port}:3000 -p 127.0.0.1:${metricsPort}:9464 `);
    }
    expect(printed).toContain('--build-arg BASE=docker.io/library/node:24-bookworm-slim');
  });
});
