import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { parseAllDocuments, parse } from 'yaml';
import type { Model } from '@kubernetes-models/base';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { loadConfig, SETTING_NAMES } from '../../src/process/config';
import { buildTestApp } from '../helpers/app';
import { systemTool } from '../helpers/system-tools';

const ROOT = path.resolve(__dirname, '..', '..');
const BASE = path.join(ROOT, 'deploy', 'kubernetes');
const KUBECTL = systemTool('kubectl');
const kubectlInstalled = path.isAbsolute(KUBECTL);
if (!kubectlInstalled)
  process.stderr.write('kubectl not found: the Kubernetes manifests are read as the YAML files kustomization.yaml lists\n');

/** Each kind the base holds, by apiVersion and kind, with Kubernetes' own schema for it (kubernetes-models). */
const MODELS: Record<string, new (data: never) => Model<unknown>> = {
  'apps/v1 Deployment': Deployment,
  'batch/v1 Job': Job,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'v1 Service': Service,
};

type KubernetesObject = { apiVersion: string; kind: string; metadata: { name: string }; [field: string]: unknown };

function documents(text: string): KubernetesObject[] {
  return parseAllDocuments(text).map((document) => document.toJS() as KubernetesObject);
}

/** The base as kustomize lists it, file by file: what `kubectl kustomize` renders from a base of plain resources. */
function readBase(): KubernetesObject[] {
  const kustomization = parse(readFileSync(path.join(BASE, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.flatMap((file) => documents(readFileSync(path.join(BASE, file), 'utf8')));
}

const byName = (objects: KubernetesObject[]) =>
  [...objects].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));

const objects = kubectlInstalled ? documents(execFileSync(KUBECTL, ['kustomize', BASE], { encoding: 'utf8' })) : readBase();
const find = <T>(kind: string, name: string) => objects.find((object) => object.kind === kind && object.metadata.name === name) as T;
const deployment = find<Deployment>('Deployment', 'receiver');
const job = find<Job>('Job', 'receiver-migrate');
const pod = deployment.spec?.template.spec as IPodSpec;
const container = pod.containers[0];

/** The environment a container gets: its values, a stand-in of the right form for each Secret's, the pod's name. */
function environmentOf(of: IContainer): Record<string, string> {
  const standIns: Record<string, string> = {
    'database-url': 'postgres://receiver@postgres:5432/receiver',
    'migrate-database-url': 'postgres://migrator@postgres:5432/receiver',
    'redis-url': 'redis://redis:6379',
    'admin-token': 'an-admin-token-of-the-operators',
    'webhook-secret': 'whsec_c2VjcmV0LW9mLXRoZS1vcGVyYXRvcg==',
    'nats-url': 'nats://receiver:a-password-of-the-operators@nats:4222',
  };
  return Object.fromEntries(
    (of.env ?? []).map((variable) => {
      const secretKey = variable.valueFrom?.secretKeyRef?.key;
      if (secretKey) return [variable.name, standIns[secretKey] ?? `no stand-in for ${secretKey}`];
      if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.name') return [variable.name, 'receiver-7d9f8-x2x4q'];
      return [variable.name, variable.value ?? ''];
    }),
  );
}

describe('deploy/kubernetes, the kustomize base', () => {
  it(`renders (${kubectlInstalled ? 'kubectl kustomize' : 'the listed YAML'}) the Deployment, two Services, the PodDisruptionBudget and the migration Job`, () => {
    expect(objects.map((object) => `${object.apiVersion} ${object.kind} ${object.metadata.name}`).sort()).toEqual([
      'apps/v1 Deployment receiver',
      'batch/v1 Job receiver-migrate',
      'policy/v1 PodDisruptionBudget receiver',
      'v1 Service receiver',
      'v1 Service receiver-metrics',
    ]);
    // kubectl renders exactly the files it lists, so reading them where kubectl is missing checks the same objects.
    if (kubectlInstalled) expect(byName(objects)).toEqual(byName(readBase()));
  });

  it.each(objects.map((object) => [`${object.kind} ${object.metadata.name}`, object] as const))(
    '%s is valid against Kubernetes’ schema for its kind',
    (_name, object) => {
      const model = MODELS[`${object.apiVersion} ${object.kind}`];
      expect(model).toBeDefined();
      expect(() => new model(object as never).validate()).not.toThrow();
    },
  );

  it('sets only settings this version reads, with values it accepts, and runs migrations in the Job alone', () => {
    for (const of of [container, job.spec?.template.spec?.containers[0] as IContainer]) {
      expect((of.env ?? []).map((variable) => variable.name).filter((name) => !SETTING_NAMES.includes(name))).toEqual([]);
      expect(() => loadConfig(environmentOf(of))).not.toThrow();
    }
    const config = loadConfig(environmentOf(container));
    expect(config.database).toMatchObject({ migrateOnStart: false, poolSize: 10 });
    expect(config.shutdownDelayMs).toBeGreaterThan(0);
    // The kubelet's SIGKILL comes after terminationGracePeriodSeconds: a whole delay and drain must fit before it.
    expect((pod.terminationGracePeriodSeconds as number) * 1000).toBeGreaterThan(config.shutdownDelayMs + config.shutdownTimeoutMs);
    expect(container.env?.find((variable) => variable.name === 'INSTANCE_ID')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'WEBHOOK_SECRET', 'NATS_URL'])
      expect(container.env?.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef?.name).toBe('receiver');
    // The Job runs npm run migrate's script, as the image holds it (dist/cli/migrate.js, from src/cli/migrate.ts).
    const migrateScript = (job.spec?.template.spec?.containers[0].command ?? []).join(' ');
    expect(migrateScript).toBe('node dist/cli/migrate.js');
    expect(existsSync(path.join(ROOT, 'src', 'cli', 'migrate.ts'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.migrate).toContain('node dist/cli/migrate.js');
  });

  it('names the ports the service listens on, and the Services and the budget select the receivers', () => {
    const config = loadConfig(environmentOf(container));
    const ports = Object.fromEntries((container.ports ?? []).map((port) => [port.name, port.containerPort]));
    expect(ports).toEqual({ http: config.port, metrics: config.metrics.port });
    const service = find<Service>('Service', 'receiver');
    const metrics = find<Service>('Service', 'receiver-metrics');
    expect(service.spec?.ports?.map((port) => port.targetPort)).toEqual(['http']);
    expect(metrics.spec?.ports?.map((port) => port.targetPort)).toEqual(['metrics']);
    const labels = deployment.spec?.template.metadata?.labels;
    expect(deployment.spec?.selector.matchLabels).toEqual(labels);
    expect(service.spec?.selector).toEqual(labels);
    expect(metrics.spec?.selector).toEqual(labels);
    expect(find<PodDisruptionBudget>('PodDisruptionBudget', 'receiver').spec?.selector?.matchLabels).toEqual(labels);
    expect(job.spec?.template.metadata?.labels).not.toEqual(labels);
    expect(deployment.spec?.replicas).toBe(2);
  });

  it('probes paths the service answers: liveness and start-up /healthz, readiness /readyz, on the partners’ port', async () => {
    const { server } = await buildTestApp();
    const probes = { startup: container.startupProbe, liveness: container.livenessProbe, readiness: container.readinessProbe };
    const answers: Record<string, unknown> = {};
    for (const [name, probe] of Object.entries(probes)) {
      const response = await request(server).get(probe?.httpGet?.path ?? '(no httpGet path)');
      answers[name] = { path: probe?.httpGet?.path, port: probe?.httpGet?.port, status: response.status };
    }
    expect(answers).toEqual({
      startup: { path: '/healthz', port: 'http', status: 200 },
      liveness: { path: '/healthz', port: 'http', status: 200 },
      readiness: { path: '/readyz', port: 'http', status: 200 },
    });
  });

  it('runs as the image’s non-root user, read-only, without privilege escalation or any capability, with resources set', () => {
    const imageUser = /^USER (\d+):(\d+)$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    for (const spec of [pod, job.spec?.template.spec as IPodSpec]) {
      expect(spec.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: Number(imageUser?.[1]),
        runAsGroup: Number(imageUser?.[2]),
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const each of spec.containers) {
        expect(each.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(each.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
        expect(each.resources?.limits).toMatchObject({ memory: expect.any(String) });
      }
    }
  });
});
