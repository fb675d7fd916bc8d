import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startCommand } from '../../scripts/start-command';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const packageJson = JSON.parse(read('package.json'));

describe('one Node everywhere: 24 LTS', () => {
  it('engines, .nvmrc, the node package that npm installs, its types and the image base all say 24', () => {
    expect({
      engines: packageJson.engines.node,
      nvmrc: read('.nvmrc').trim(),
      nodePackage: packageJson.devDependencies.node,
      types: packageJson.devDependencies['@types/node'],
      image: /^ARG BASE=(.+)$/m.exec(read('Dockerfile'))?.[1],
    }).toEqual({
      engines: '24.x',
      nvmrc: '24',
      nodePackage: expect.stringMatching(/^\^24\./),
      types: expect.stringMatching(/^\^24\./),
      image: expect.stringMatching(/^node:24\.\d+\.\d+-bookworm-slim$/),
    });
  });

  it('npm start runs the built service and never compiles (it works after npm ci --omit=dev, with no TypeScript)', () => {
    expect({ start: packageJson.scripts.start, prestart: packageJson.scripts.prestart }).toEqual({
      start: 'GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=1048576} exec node --max-semi-space-size=16 dist/server.js',
      prestart: undefined,
    });
  });

  it("the image's CMD runs node with npm start's arguments, and its ENV sets the environment npm start gives by default", () => {
    const dockerfile = read('Dockerfile');
    const start = startCommand(ROOT);
    const cmd = JSON.parse(/^CMD (\[.+\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    const imageEnvironment = /^ENV (.+)$/m.exec(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')))?.[1].split(' ') ?? [];
    const startDefaults = Object.entries(start.environmentDefaults).map(([name, value]) => `${name}=${value}`);
    expect({ cmd, environment: imageEnvironment.filter((setting) => startDefaults.includes(setting)) }).toEqual({
      cmd: start.command,
      environment: ['GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576'],
    });
  });
});

describe('docker-compose.yml', () => {
  it('gives every receiver a stop grace period longer than SHUTDOWN_TIMEOUT_MS, so a drain is never cut by SIGKILL', () => {
    const compose = read('docker-compose.yml');
    // The receivers share one definition (x-receiver, merged into each with <<: *receiver), which sets both.
    const shared = compose.slice(compose.indexOf('\nx-receiver:'), compose.indexOf('\nservices:'));
    const graceSeconds = Number(/^\s+stop_grace_period: (\d+)s$/m.exec(shared)?.[1]);
    // The compose file's own SHUTDOWN_TIMEOUT_MS if it sets one, else the image's.
    const shutdownMs = Number(
      /^\s+SHUTDOWN_TIMEOUT_MS: "(\d+)"$/m.exec(shared)?.[1] ?? /^ENV SHUTDOWN_TIMEOUT_MS=(\d+)$/m.exec(read('Dockerfile'))?.[1],
    );
    expect(shutdownMs).toBeGreaterThan(0);
    expect(graceSeconds * 1000).toBeGreaterThan(shutdownMs);
    const services = compose.slice(compose.indexOf('\nservices:'));
    for (const receiver of ['receiver-a', 'receiver-b']) {
      const service = services.slice(services.indexOf(`\n  ${receiver}:`)).split(/\n {2}(?=\S)/)[1];
      expect([receiver, /^\s+<<: \*receiver$/m.test(service), /stop_grace_period|SHUTDOWN_TIMEOUT_MS/.test(service)]).toEqual([
        receiver,
        true,
        false,
      ]);
    }
  });
});
