import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import type { IContainer, IPodSpec, IPodTemplateSpec } from 'kubernetes-models/v1';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { dbConfig, loadConfig } from '@inferq/core';
import { createExecutableFinder, findFreePort, resolveDebianBinary } from '@inferq/dev-stack';
import { parseRedisUrl } from '@inferq/queue';
import { createApiMetrics } from '../../apps/api/src/metrics/api-metrics.ts';
import { REDIS_SERVER } from '../../packages/dev-stack/src/debian-binary.ts';

// Every overlay renders with kustomize, every object passes its Kubernetes (or
// KEDA, or CloudNativePG) schema, and the rules the deployment depends on hold:
// probes, limits, non-root, GPU placement, shutdown grace, the scaling signal,
// worker egress; on-prem, stores that survive a node loss (or, in the small
// install, one pod each); and on EKS no in-cluster stores and no S3 keys.

const run = promisify(execFile);
const k8sDir = resolve(import.meta.dirname, '../../k8s');

/**
 * CloudNativePG ships no npm models: its Cluster is checked against a subset of
 * the CRD's own schema (schemas/cnpg-cluster.schema.json says which release,
 * and how it was derived).
 */
const validateCnpgCluster = (() => {
  const ajv = new Ajv2019({ allErrors: true });
  // The CRD's integer formats (Go's int32 and int64).
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  const schemaPath = resolve(import.meta.dirname, 'schemas/cnpg-cluster.schema.json');
  const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')) as object);
  return (data: unknown) => {
    if (!validate(data)) throw new Error(ajv.errorsText(validate.errors, { dataVar: 'Cluster' }));
  };
})();

class CnpgCluster {
  constructor(private readonly data: unknown) {}
  validate(): void {
    validateCnpgCluster(this.data);
  }
}

/** One model class per kind we ship; a kind missing here fails the test, so nothing goes unvalidated. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/DaemonSet': DaemonSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'postgresql.cnpg.io/v1/Cluster': CnpgCluster,
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Shapes differ per kind; the schema test has checked them. */
  spec?: any;
  data?: Record<string, string>;
  type?: string;
}

/** kubectl with kustomize v5 inside, or why there is none. */
async function findKubectl(): Promise<{ path: string } | { missing: string }> {
  const kubectl = createExecutableFinder(process.env.PATH)('kubectl');
  const hint = "install kubectl >= 1.27 (kustomize v5 inside) from https://kubernetes.io/docs/tasks/tools/; Debian's kubernetes-client is too old";
  if (!kubectl) return { missing: `kubectl was not found (${hint})` };
  const { stdout } = await run(kubectl, ['version', '--client', '-o', 'json']);
  const kustomize = (JSON.parse(stdout) as { kustomizeVersion?: string }).kustomizeVersion ?? '';
  if (!/^v([5-9]|\d{2,})\./.test(kustomize)) return { missing: `${kubectl} embeds kustomize ${kustomize || '(unknown)'} (${hint})` };
  return { path: kubectl };
}

/**
 * Renders an overlay as an operator would: in a copy of k8s/, with each file
 * that has a committed `<name>.example` (secrets.env, postgres-app.env) written
 * from it (and a stand-in RDS CA bundle on EKS). Real secrets an operator left
 * in the tree are not copied.
 */
async function render(kubectl: string, overlay: string, workDir: string): Promise<string> {
  const copy = join(workDir, overlay);
  await cp(k8sDir, copy, { recursive: true, filter: (src) => basename(src) !== 'rds-ca.pem' && !existsSync(`${src}.example`) });
  const overlayDir = join(copy, 'overlays', overlay);
  for (const name of (await readdir(overlayDir)).filter((n) => n.endsWith('.example')))
    await writeFile(join(overlayDir, name.slice(0, -'.example'.length)), await readFile(join(overlayDir, name), 'utf8'));
  if (overlay === 'eks') await writeFile(join(overlayDir, 'rds-ca.pem'), '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n');
  const { stdout } = await run(kubectl, ['kustomize', overlayDir], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

function parseRender(text: string): K8sObject[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    return doc.toJS() as K8sObject;
  });
}

/**
 * kustomize folds long base64 Secret values over several lines; the API server
 * (Go's base64 decoder) skips the line breaks, the schema's "byte" format does not.
 */
const normalise = (o: K8sObject): K8sObject =>
  o.kind === 'Secret' && o.data ? { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, v.replace(/\s+/g, '')])) } : o;

const gvk = (o: K8sObject) => `${o.apiVersion}/${o.kind}`;
const id = (o: K8sObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);

function podTemplate(o: K8sObject): IPodTemplateSpec & { spec: IPodSpec } {
  return o.spec.template;
}
const containersOf = (o: K8sObject): IContainer[] => [...(podTemplate(o).spec.initContainers ?? []), ...podTemplate(o).spec.containers];

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the render`);
  return found;
}
/** Generated ConfigMaps and Secrets carry a hash suffix. */
const findGenerated = (objects: K8sObject[], kind: string, name: string) =>
  objects.filter((o) => o.kind === kind && new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name));

/** An env var's value as the container sees it: its own `value`, else a ConfigMap it loads with envFrom. */
function envValue(objects: K8sObject[], o: K8sObject, container: IContainer, name: string): string | undefined {
  const direct = container.env?.find((e) => e.name === name);
  if (direct) return direct.value;
  for (const source of container.envFrom ?? []) {
    const cm =
      source.configMapRef &&
      objects.find((x) => x.kind === 'ConfigMap' && x.metadata.name === source.configMapRef?.name && x.metadata.namespace === o.metadata.namespace);
    if (cm?.data?.[name] !== undefined) return cm.data[name];
  }
  return undefined;
}

/** A decoded Secret value. */
const secretValue = (secret: K8sObject, key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');

/** A config file's settings: its lines without comments and blanks. */
const confLines = (text: string | undefined) =>
  (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

const isEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The in-cluster stores and what they need: their StatefulSets and CloudNativePG Clusters, the Services and
 * PodDisruptionBudgets that select their pods, the ConfigMaps and Secrets they read.
 */
function storeObjects(objects: K8sObject[]): K8sObject[] {
  const stores = objects.filter((o) => o.kind === 'StatefulSet' || o.kind === 'Cluster');
  const podLabels = stores.filter((o) => o.kind === 'StatefulSet').map((o) => podTemplate(o).metadata?.labels ?? {});
  const selectsAStore = (selector: Record<string, string> | undefined) =>
    selector !== undefined && podLabels.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v));
  const named = new Set<string>();
  for (const o of stores) {
    if (o.kind === 'Cluster') {
      if (o.spec.bootstrap?.initdb?.secret) named.add(`Secret/${o.spec.bootstrap.initdb.secret.name}`);
      continue;
    }
    for (const v of podTemplate(o).spec.volumes ?? []) if (v.configMap) named.add(`ConfigMap/${v.configMap.name}`);
    for (const c of containersOf(o)) for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) named.add(`Secret/${e.valueFrom.secretKeyRef.name}`);
  }
  return objects.filter(
    (o) =>
      stores.includes(o) ||
      named.has(`${o.kind}/${o.metadata.name}`) ||
      (o.kind === 'Service' && selectsAStore(o.spec.selector)) ||
      (o.kind === 'PodDisruptionBudget' && selectsAStore(o.spec.selector.matchLabels)),
  );
}

/** Ports an egress policy opens (as numbers), failing on a rule that opens every port. */
function egressPorts(policy: INetworkPolicy): number[] {
  return (policy.spec?.egress ?? []).flatMap((rule) => {
    if (!rule.ports?.length) throw new Error(`${policy.metadata?.name} has an egress rule without ports (every port open)`);
    return rule.ports.map((p) => Number(p.port));
  });
}

/** nginx size ("40m", "1100m", "1g") in bytes. */
function nginxSize(text: string): number {
  const match = /^(\d+)([kmg]?)$/i.exec(text);
  if (!match) throw new Error(`not an nginx size: ${text}`);
  return Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] || ' ').toLowerCase());
}

const apiMetricNames = () =>
  new Set(
    createApiMetrics({} as never)
      .registry.getMetricsAsArray()
      .map((m) => m.name),
  );

// Each overlay's render is committed as k8s/rendered/<overlay>.yaml: what an
// operator reviews before applying, and what these tests check on a machine
// without a kustomize v5 (any Debian box: no package has one). Where kubectl
// has one, the overlays are rendered afresh and must equal the committed files
// (`npx vitest run infrastructure/tests/k8s-manifests.test.ts -u` rewrites them).
const OVERLAYS = ['onprem', 'small', 'eks'];
const snapshotPath = (overlay: string) => join(k8sDir, 'rendered', `${overlay}.yaml`);
const kubectl = await findKubectl();
const renders = new Map<string, string>();
const rendered = new Map<string, K8sObject[]>();
let workDir = '';

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'inferq-k8s-'));
  if ('missing' in kubectl) console.warn(`k8s: checking the committed renders in k8s/rendered/ without rendering afresh: ${kubectl.missing}`);
  await Promise.all(
    OVERLAYS.map(async (overlay) => {
      const text = 'path' in kubectl ? await render(kubectl.path, overlay, workDir) : await readFile(snapshotPath(overlay), 'utf8');
      renders.set(overlay, text);
      rendered.set(overlay, parseRender(text));
    }),
  );
});

describe.each(OVERLAYS)('k8s/rendered/%s.yaml', (overlay) => {
  it.skipIf('missing' in kubectl)('is what kustomize renders from k8s/overlays now', async () => {
    await expect(renders.get(overlay)).toMatchFileSnapshot(snapshotPath(overlay));
  });
});
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe.each(OVERLAYS)('k8s overlay %s', (overlay) => {
  const objects = () => rendered.get(overlay) ?? [];
  const workloads = () => objects().filter((o) => WORKLOADS.has(o.kind));
  const api = () => find(objects(), 'Deployment', 'inferq-api');
  const worker = () => find(objects(), 'Deployment', 'inferq-worker');

  it('passes the Kubernetes and KEDA schemas, object by object', () => {
    expect(objects().length).toBeGreaterThan(15);
    for (const o of objects()) {
      const ModelClass = MODELS[gvk(o)];
      if (!ModelClass) throw new Error(`${id(o)}: no schema model for ${gvk(o)}; add one to MODELS`);
      try {
        new ModelClass(normalise(o) as never).validate();
      } catch (err) {
        throw new Error(`${id(o)} fails its schema: ${(err as Error).message}`);
      }
    }
  });

  it('references only ConfigMaps, Secrets and keys that the render contains', () => {
    for (const o of workloads()) {
      const ns = o.metadata.namespace;
      const has = (kind: string, name: string, key?: string) => {
        const target = objects().find((x) => x.kind === kind && x.metadata.name === name && x.metadata.namespace === ns);
        return target !== undefined && (key === undefined || target.data?.[key] !== undefined);
      };
      for (const c of containersOf(o)) {
        for (const e of c.env ?? []) {
          const s = e.valueFrom?.secretKeyRef;
          const m = e.valueFrom?.configMapKeyRef;
          if (s) expect(has('Secret', s.name ?? '', s.key), `${id(o)} env ${e.name}: Secret ${s.name} key ${s.key}`).toBe(true);
          if (m) expect(has('ConfigMap', m.name ?? '', m.key), `${id(o)} env ${e.name}: ConfigMap ${m.name} key ${m.key}`).toBe(true);
        }
        for (const f of c.envFrom ?? []) {
          if (f.configMapRef) expect(has('ConfigMap', f.configMapRef.name ?? ''), `${id(o)} envFrom ${f.configMapRef.name}`).toBe(true);
          if (f.secretRef) expect(has('Secret', f.secretRef.name ?? ''), `${id(o)} envFrom ${f.secretRef.name}`).toBe(true);
        }
      }
      for (const v of podTemplate(o).spec.volumes ?? []) {
        if (v.configMap) expect(has('ConfigMap', v.configMap.name ?? ''), `${id(o)} volume ${v.name}`).toBe(true);
        if (v.secret) expect(has('Secret', v.secret.secretName ?? ''), `${id(o)} volume ${v.name}`).toBe(true);
      }
    }
  });

  it('pins every image to a registry and tag (kustomize images: did its job)', () => {
    const pinned = /^[a-z0-9.-]+(\/[a-z0-9._-]+)+:[\w.-]+$/;
    for (const o of workloads()) for (const c of containersOf(o)) expect(c.image, `${id(o)} ${c.name}`).toMatch(pinned);
    for (const o of objects().filter((x) => x.kind === 'Cluster')) expect(o.spec.imageName, id(o)).toMatch(pinned);
  });

  it('gives every container resource requests and limits, and long-running ones probes', () => {
    for (const o of workloads()) {
      for (const c of containersOf(o)) {
        const where = `${id(o)} container ${c.name}`;
        for (const r of ['cpu', 'memory']) {
          expect(c.resources?.requests?.[r], `${where} requests.${r}`).toBeDefined();
          expect(c.resources?.limits?.[r], `${where} limits.${r}`).toBeDefined();
        }
        if (o.kind === 'Job') continue;
        expect(c.livenessProbe, `${where} livenessProbe`).toBeDefined();
        expect(c.readinessProbe, `${where} readinessProbe`).toBeDefined();
      }
    }
  });

  it('runs inferq pods as non-root within the restricted Pod Security profile', () => {
    const inferqPods = workloads().filter((o) => o.metadata.namespace === 'inferq');
    // Only the DCGM exporter runs as root (pod-resources socket, SYS_ADMIN for profiling), alone in its own namespace.
    expect(
      workloads()
        .filter((o) => !inferqPods.includes(o))
        .map(id),
    ).toEqual(['DaemonSet gpu-monitoring/dcgm-exporter']);
    expect(find(objects(), 'Namespace', 'inferq').metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const o of inferqPods) {
      const pod = podTemplate(o).spec;
      expect(pod.hostNetwork || pod.hostPID || pod.hostIPC, `${id(o)} host namespaces`).toBeFalsy();
      expect(
        (pod.volumes ?? []).filter((v) => v.hostPath),
        `${id(o)} hostPath`,
      ).toEqual([]);
      for (const c of containersOf(o)) {
        const where = `${id(o)} container ${c.name}`;
        const sc = c.securityContext ?? {};
        expect(sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, `${where} runAsNonRoot`).toBe(true);
        expect(sc.runAsUser ?? pod.securityContext?.runAsUser, `${where} runAsUser`).toBeGreaterThan(0);
        expect(sc.allowPrivilegeEscalation, `${where} allowPrivilegeEscalation`).toBe(false);
        expect(sc.privileged, `${where} privileged`).toBeFalsy();
        expect(sc.capabilities?.drop, `${where} drops capabilities`).toEqual(['ALL']);
        expect(sc.readOnlyRootFilesystem, `${where} readOnlyRootFilesystem`).toBe(true);
        expect((sc.seccompProfile ?? pod.securityContext?.seccompProfile)?.type, `${where} seccomp`).toBe('RuntimeDefault');
      }
    }
    for (const name of ['inferq-api', 'inferq-worker']) expect(podTemplate(find(objects(), 'Deployment', name)).spec.securityContext?.runAsUser).toBe(10001);
  });

  it('puts the CUDA worker on one GPU and never gives the API image a GPU', () => {
    for (const o of workloads()) {
      for (const c of containersOf(o)) {
        const gpus = c.resources?.limits?.['nvidia.com/gpu'] ?? c.resources?.requests?.['nvidia.com/gpu'];
        if (c.image?.includes('/inferq-api:')) expect(gpus, `${id(o)} runs the API image with a GPU`).toBeUndefined();
      }
    }
    const [c] = podTemplate(worker()).spec.containers;
    expect(c?.image).toMatch(/\/inferq-worker-cuda:/);
    expect(String(c?.resources?.limits?.['nvidia.com/gpu'])).toBe('1');
    expect(envValue(objects(), worker(), c!, 'WORKER_DEVICES')).toBe('cuda:0');
    const pod = podTemplate(worker()).spec;
    expect(Object.keys(pod.nodeSelector ?? {}).length).toBeGreaterThan(0);
    expect(pod.tolerations?.some((t) => t.key === 'nvidia.com/gpu')).toBe(true);
    // A surge pod would wait for the GPU its predecessor holds.
    expect(worker().spec.strategy.rollingUpdate).toMatchObject({ maxSurge: 0 });
    const dcgm = find(objects(), 'DaemonSet', 'dcgm-exporter');
    expect(podTemplate(dcgm).spec.containers[0]?.image).toMatch(/^nvcr\.io\/nvidia\/k8s\/dcgm-exporter:/);
    expect(podTemplate(dcgm).metadata?.annotations?.['prometheus.io/port']).toBe('9400');
    expect(podTemplate(dcgm).spec.nodeSelector).toEqual(pod.nodeSelector);
  });

  it('lets a worker finish its batch: grace period longer than SHUTDOWN_TIMEOUT_MS', () => {
    const [c] = podTemplate(worker()).spec.containers;
    const shutdownMs = Number(envValue(objects(), worker(), c!, 'SHUTDOWN_TIMEOUT_MS') ?? 30_000);
    const graceS = podTemplate(worker()).spec.terminationGracePeriodSeconds ?? 30;
    expect(graceS * 1000).toBeGreaterThan(shutdownMs);
    expect(c?.lifecycle?.preStop, 'a preStop hook would eat into the grace period').toBeUndefined();
    expect(c?.livenessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'metrics' });
    expect(c?.ports?.find((p) => p.name === 'metrics')?.containerPort).toBe(9464);
  });

  it('rolls the API without losing capacity and drains endpoints before SIGTERM', () => {
    const spec = api().spec;
    expect(spec.replicas, 'a fixed replica count would fight the HPA on every apply').toBeUndefined();
    expect(spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const [c] = podTemplate(api()).spec.containers;
    expect(c?.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(c?.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(c?.startupProbe).toBeDefined();
    expect(c?.lifecycle?.preStop?.sleep?.seconds).toBeGreaterThan(0);
    const hpa = find(objects(), 'HorizontalPodAutoscaler', 'inferq-api');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'inferq-api' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    for (const name of ['inferq-api', 'inferq-worker'])
      expect(find(objects(), 'PodDisruptionBudget', name).spec.selector.matchLabels).toEqual(find(objects(), 'Deployment', name).spec.selector.matchLabels);
  });

  it('scales workers with KEDA on the backlog the API exports, down to zero', () => {
    const so = find(objects(), 'ScaledObject', 'inferq-worker');
    expect(so.spec.scaleTargetRef.name).toBe(worker().metadata.name);
    expect(so.spec.scaleTargetRef.kind ?? 'Deployment').toBe('Deployment');
    expect(so.metadata.namespace).toBe(worker().metadata.namespace);
    expect(so.spec.minReplicaCount).toBe(0);
    expect(so.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    const triggers = so.spec.triggers as Array<{ type: string; metadata: Record<string, string> }>;
    expect(triggers.every((t) => t.type === 'prometheus' && t.metadata.serverAddress === 'http://prometheus.monitoring.svc:9090')).toBe(true);
    // Every API replica exports the same backlog: max across replicas, never sum.
    expect(triggers.some((t) => /sum\(\s*max by \(model\) \(inferq_queue_backlog\)\s*\)/.test(t.metadata.query ?? ''))).toBe(true);
    const exported = apiMetricNames();
    const queried = triggers.flatMap((t) => [...(t.metadata.query ?? '').matchAll(/\binferq_[a-z0-9_]+/g)].map(([n]) => n));
    expect(queried.filter((n) => !exported.has(n))).toEqual([]);
  });

  it('lets workers reach only their backends, DNS and the trace collector', () => {
    const policies = objects().filter((o) => o.kind === 'NetworkPolicy') as unknown as INetworkPolicy[];
    const workerLabels = podTemplate(worker()).metadata?.labels ?? {};
    const selectsWorker = (p: INetworkPolicy) => Object.entries(p.spec?.podSelector.matchLabels ?? {}).every(([k, v]) => workerLabels[k] === v);
    const egress = policies.filter((p) => selectsWorker(p) && p.spec?.policyTypes?.includes('Egress'));
    expect(egress.map((p) => p.metadata?.name)).toEqual(['inferq-worker']);
    const ports = new Set(egress.flatMap(egressPorts));
    expect([...ports].filter((p) => ![53, 6379, 26379, 5432, 443, 9000, 4318].includes(p))).toEqual([]);
    for (const p of [53, 6379, 5432]) expect(ports.has(p), `port ${p}`).toBe(true);
    expect(ports.has(443) || ports.has(9000), 'S3').toBe(true);
    const ingressPorts = egress[0]!.spec!.ingress!.flatMap((r) => (r.ports ?? []).map((p) => p.port));
    expect(ingressPorts).toEqual([9464]);
    expect(
      policies.some(
        (p) =>
          Object.keys(p.spec?.podSelector ?? {}).every((k) => k !== 'matchLabels' && k !== 'matchExpressions') &&
          p.spec?.policyTypes?.includes('Ingress') &&
          !p.spec?.ingress?.length,
      ),
      'default deny ingress',
    ).toBe(true);
  });

  it('puts what the migration needs in the first apply step (-l inferq.io/phase=prepare)', () => {
    const job = find(objects(), 'Job', 'inferq-migrate');
    const [c] = containersOf(job);
    expect(c?.command).toEqual(['node', 'dist/api/migrate.js']);
    expect(c?.image).toMatch(/\/inferq-api:/);
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    const pod = podTemplate(job).spec;
    const needed: Array<[string, string | undefined]> = [
      ['Job', job.metadata.name],
      ['Namespace', job.metadata.namespace],
      ['ServiceAccount', pod.serviceAccountName],
      ...(c?.env ?? []).flatMap((e): Array<[string, string | undefined]> => (e.valueFrom?.secretKeyRef ? [['Secret', e.valueFrom.secretKeyRef.name]] : [])),
      ...(c?.envFrom ?? []).map((f): [string, string | undefined] => ['ConfigMap', f.configMapRef?.name]),
      ...(pod.volumes ?? []).flatMap((v): Array<[string, string | undefined]> => (v.configMap ? [['ConfigMap', v.configMap.name]] : [])),
      // Step 1 brings up the in-cluster stores (the Postgres the Job migrates among them), what they read, and every
      // NetworkPolicy (the default deny among them).
      ...storeObjects(objects()).map((o): [string, string] => [o.kind, o.metadata.name]),
      ...objects()
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o): [string, string] => [o.kind, o.metadata.name]),
    ];
    for (const [kind, name] of needed) expect(find(objects(), kind, name ?? '').metadata.labels?.['inferq.io/phase'], `${kind} ${name}`).toBe('prepare');
  });
});

/** A container's env entry by name. */
const envEntry = (c: IContainer | undefined, name: string) => c?.env?.find((e) => e.name === name);

describe.each(['onprem', 'small'])('k8s overlay %s: MinIO and NGINX', (overlay) => {
  const objects = () => rendered.get(overlay) ?? [];

  it('creates the bucket inferq uses and points S3 at a MinIO Service', () => {
    const [config] = findGenerated(objects(), 'ConfigMap', 'inferq-config');
    expect(config?.data?.S3_FORCE_PATH_STYLE).toBe('true');
    const endpoint = new URL(config?.data?.S3_ENDPOINT ?? '');
    expect(endpoint.protocol).toBe('http:');
    const service = find(objects(), 'Service', endpoint.hostname);
    expect(service.spec.clusterIP, 'a Service that balances, not the headless one').toBeUndefined();
    expect(service.spec.ports.map((p: { port: number }) => String(p.port))).toContain(endpoint.port);
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'minio' });
    const minio = objects().find((o) => o.kind === 'StatefulSet' && podTemplate(o).metadata?.labels?.['app.kubernetes.io/name'] === 'minio');
    expect(minio, 'a MinIO StatefulSet').toBeDefined();
    const job = find(objects(), 'Job', 'minio-create-bucket');
    const [mc] = containersOf(job);
    expect(mc?.args).toEqual(['mb', '--ignore-existing', 'local/$(S3_BUCKET)']);
    expect(new URL(envEntry(mc, 'MC_HOST_local')?.value ?? '').host).toBe(endpoint.host);
  });

  it('admits model uploads through NGINX with TLS, and everything else with a rate limit', () => {
    const [config] = findGenerated(objects(), 'ConfigMap', 'inferq-config');
    const ingresses = objects().filter((o) => o.kind === 'Ingress');
    for (const ing of ingresses) {
      expect(ing.spec.ingressClassName).toBe('nginx');
      expect(ing.spec.tls?.[0]?.secretName).toBe('inferq-tls');
      expect(ing.metadata.annotations?.['nginx.ingress.kubernetes.io/limit-rps']).toMatch(/^\d+$/);
    }
    const uploads = ingresses.find((i) => i.spec.rules[0].http.paths.some((p: { path: string }) => p.path === '/v1/models'));
    const bodyLimit = nginxSize(uploads?.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '0');
    expect(bodyLimit).toBeGreaterThan(Number(config?.data?.MODEL_UPLOAD_LIMIT_BYTES));
  });
});

describe('k8s overlay small: one pod per store', () => {
  const objects = () => rendered.get('small') ?? [];

  it('runs Redis, Postgres and MinIO as StatefulSets of one pod, each on a volume', () => {
    expect(
      objects()
        .filter((o) => o.kind === 'StatefulSet')
        .map((o) => [o.metadata.name, o.spec.replicas, o.spec.volumeClaimTemplates?.length]),
    ).toEqual([
      ['minio', 1, 1],
      ['postgres', 1, 1],
      ['redis', 1, 1],
    ]);
    expect(objects().filter((o) => o.kind === 'Cluster')).toEqual([]);
  });

  it('runs Redis with AOF and noeviction, from a mounted redis.conf', () => {
    const [config] = findGenerated(objects(), 'ConfigMap', 'redis-config');
    const lines = confLines(config?.data?.['redis.conf']);
    expect(lines).toContain('appendonly yes');
    expect(lines).toContain('maxmemory-policy noeviction');
    const redis = find(objects(), 'StatefulSet', 'redis');
    expect(podTemplate(redis).spec.volumes?.find((v) => v.configMap)?.configMap?.name).toBe(config?.metadata.name);
    expect(containersOf(redis)[0]?.args?.[0]).toBe('/etc/redis/redis.conf');
  });

  it('says what it risks: a node loss is an outage of the record, the queue or the objects', async () => {
    const kustomization = await readFile(join(k8sDir, 'overlays/small/kustomization.yaml'), 'utf8');
    for (const store of ['Postgres', 'Redis', 'MinIO']) expect(kustomization).toMatch(new RegExp(`#.*${store}`));
    expect(kustomization).toMatch(/^#.*What it risks/m);
  });
});

describe('k8s overlay onprem: stores that survive a node loss', () => {
  const objects = () => rendered.get('onprem') ?? [];
  const secrets = () => findGenerated(objects(), 'Secret', 'inferq-secrets')[0]!;
  const cluster = () => find(objects(), 'Cluster', 'inferq-postgres');
  /** Pods of a StatefulSet may not share a node. */
  const spreadOverNodes = (sts: K8sObject) => {
    const [term, ...more] = podTemplate(sts).spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    expect(more, id(sts)).toEqual([]);
    expect(term?.topologyKey, id(sts)).toBe('kubernetes.io/hostname');
    expect(term?.labelSelector?.matchLabels, id(sts)).toEqual(sts.spec.selector.matchLabels);
  };
  /** A PodDisruptionBudget that lets a drain take one pod of the StatefulSet at a time. */
  const oneAtATime = (sts: K8sObject) => {
    const pdbs = objects().filter((o) => o.kind === 'PodDisruptionBudget' && isEqual(o.spec.selector.matchLabels, sts.spec.selector.matchLabels));
    expect(
      pdbs.map((p) => p.spec.maxUnavailable),
      id(sts),
    ).toEqual([1]);
  };
  /** Its headless Service, which publishes each pod's name before the pod is ready (the members find each other). */
  const headless = (sts: K8sObject) => {
    const svc = find(objects(), 'Service', sts.spec.serviceName);
    expect(svc.spec.clusterIP).toBe('None');
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(svc.spec.selector).toEqual(sts.spec.selector.matchLabels);
    return svc;
  };
  const podDns = (sts: K8sObject, i: number) => `${sts.metadata.name}-${i}.${sts.spec.serviceName}.${sts.metadata.namespace}.svc.cluster.local`;

  it('runs Postgres as a CloudNativePG Cluster of three, one a node, with quorum synchronous replication', () => {
    const spec = cluster().spec;
    expect(spec.instances).toBe(3);
    expect(spec.postgresql.synchronous).toEqual({ method: 'any', number: 1, dataDurability: 'required' });
    // What CloudNativePG's admission webhook refuses beyond the CRD's schema.
    expect(spec.postgresql.synchronous.number).toBeLessThan(spec.instances);
    expect((spec.minSyncReplicas ?? 0) + (spec.maxSyncReplicas ?? 0), 'the legacy settings beside `synchronous`').toBe(0);
    expect(cluster().metadata.name.length).toBeLessThanOrEqual(50);
    expect(spec.affinity).toEqual({ enablePodAntiAffinity: true, podAntiAffinityType: 'required', topologyKey: 'kubernetes.io/hostname' });
    expect(spec.enablePDB ?? true, 'CloudNativePG makes the PodDisruptionBudgets').toBe(true);
    expect(spec.primaryUpdateMethod).toBe('switchover');
    expect(spec.postgresql.parameters.wal_compression).toBe('lz4');
    expect(spec.storage.size).toMatch(/^\d+Gi$/);
    for (const r of ['cpu', 'memory']) expect([spec.resources.requests[r], spec.resources.limits[r]], r).not.toContain(undefined);
  });

  it("points DATABASE_URL at the Cluster's read-write Service, as the owner it bootstraps with the same password", () => {
    const { initdb } = cluster().spec.bootstrap;
    const url = new URL(secretValue(secrets(), 'DATABASE_URL'));
    expect(url.protocol).toBe('postgres:');
    expect(url.host).toBe(`${cluster().metadata.name}-rw:5432`);
    expect(url.pathname).toBe(`/${initdb.database}`);
    expect(url.username).toBe(initdb.owner);
    const credentials = find(objects(), 'Secret', initdb.secret.name);
    expect(credentials.type).toBe('kubernetes.io/basic-auth');
    expect(secretValue(credentials, 'username')).toBe(initdb.owner);
    expect(secretValue(credentials, 'password')).toBe(decodeURIComponent(url.password));
    expect(credentials.metadata.namespace).toBe(cluster().metadata.namespace);
    expect(() => loadConfig(dbConfig, { DATABASE_URL: url.href })).not.toThrow();
    for (const [kind, name] of [
      ['Deployment', 'inferq-api'],
      ['Deployment', 'inferq-worker'],
      ['Job', 'inferq-migrate'],
    ] as const) {
      const ref = envEntry(podTemplate(find(objects(), kind, name)).spec.containers[0], 'DATABASE_URL')?.valueFrom?.secretKeyRef;
      expect(ref, name).toEqual({ name: secrets().metadata.name, key: 'DATABASE_URL' });
    }
  });

  it('runs Redis as a Sentinel group of three nodes, one a node, whose Sentinels REDIS_URL names', () => {
    const sts = find(objects(), 'StatefulSet', 'inferq-redis');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    spreadOverNodes(sts);
    oneAtATime(sts);
    const svc = headless(sts);
    const pod = podTemplate(sts).spec;
    const sentinel = pod.initContainers?.find((c) => c.name === 'sentinel');
    const redis = pod.containers.find((c) => c.name === 'redis');
    // A native sidecar: up before Redis asks it for the primary, down after Redis's preStop hands the role over.
    expect(sentinel?.restartPolicy).toBe('Always');
    expect(sentinel?.startupProbe).toBeDefined();
    expect(redis?.lifecycle?.preStop?.exec?.command).toEqual(['sh', '/etc/redis/redis-prestop.sh']);
    const env = (name: string) => envValue(objects(), sts, redis!, name);
    for (const name of ['REDIS_NODES', 'REDIS_GROUP', 'SENTINEL_PORT', 'SENTINEL_QUORUM', 'REDIS_PORT'])
      expect(envValue(objects(), sts, sentinel!, name), name).toBe(env(name));
    const nodes = Array.from({ length: sts.spec.replicas }, (_, i) => podDns(sts, i));
    expect(env('REDIS_NODES')?.split(/\s+/)).toEqual(nodes);
    expect(env('SELF')).toBe(`$(POD_NAME).${sts.spec.serviceName}.${sts.metadata.namespace}.svc.cluster.local`);
    expect(Number(env('SENTINEL_QUORUM')), 'a majority of the Sentinels').toBe(Math.floor(sts.spec.replicas / 2) + 1);
    const ports = Object.fromEntries(svc.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]));
    expect(ports).toEqual({ redis: Number(env('REDIS_PORT')), sentinel: Number(env('SENTINEL_PORT')) });

    const topology = parseRedisUrl(secretValue(secrets(), 'REDIS_URL'));
    if (topology.kind !== 'sentinel') throw new Error(`REDIS_URL names a ${topology.kind} topology`);
    expect(topology.sentinels).toEqual(nodes.map((host) => ({ host, port: Number(env('SENTINEL_PORT')) })));
    expect(topology.group).toBe(env('REDIS_GROUP'));
    const password = secretValue(secrets(), 'REDIS_PASSWORD');
    expect(topology.auth.password).toBe(password);
    expect(topology.sentinelPassword).toBe(password);
  });

  it('gives every Redis node AOF and noeviction, and the scripts its containers run', async () => {
    const sts = find(objects(), 'StatefulSet', 'inferq-redis');
    const [config] = findGenerated(objects(), 'ConfigMap', 'redis-config');
    expect(podTemplate(sts).spec.volumes?.find((v) => v.name === 'config')?.configMap?.name).toBe(config?.metadata.name);
    const lines = confLines(config?.data?.['redis.conf']);
    for (const line of ['appendonly yes', 'appendfsync everysec', 'maxmemory-policy noeviction', 'min-replicas-to-write 1']) expect(lines).toContain(line);
    const scripts = containersOf(sts)
      .flatMap((c) => [c.command ?? [], c.lifecycle?.preStop?.exec?.command ?? []])
      .filter((cmd) => cmd[0] === 'sh')
      .map((cmd) => cmd[1]!.replace('/etc/redis/', ''));
    expect(scripts.sort()).toEqual(['redis-prestop.sh', 'redis-start.sh', 'sentinel-start.sh']);
    const dir = await mkdtemp(join(workDir, 'redis-scripts-'));
    for (const name of [...scripts, 'find-primary.sh']) {
      expect(config?.data?.[name], name).toBeDefined();
      await writeFile(join(dir, name), config!.data![name]!);
      await run('sh', ['-n', join(dir, name)]);
    }
  });

  it('runs MinIO distributed over four servers, one a node', () => {
    const sts = find(objects(), 'StatefulSet', 'inferq-minio');
    expect(sts.spec.replicas).toBe(4);
    expect(sts.spec.podManagementPolicy, 'the servers wait for each other to become ready').toBe('Parallel');
    spreadOverNodes(sts);
    oneAtATime(sts);
    headless(sts);
    const [minio] = containersOf(sts);
    const [command, servers] = minio?.args ?? [];
    expect(command).toBe('server');
    // MinIO expands {0...3} itself: every server lists all of them, by their stable DNS names.
    expect(servers).toBe(`http://${podDns(sts, 0).replace(/-0\./, `-{0...${sts.spec.replicas - 1}}.`)}/data`);
    expect(minio?.volumeMounts?.find((m) => m.mountPath === '/data')?.name).toBe(sts.spec.volumeClaimTemplates[0].metadata.name);
  });

  it('lets each store take its peers and the CloudNativePG operator through the default deny', () => {
    const policy = (name: string) => find(objects(), 'NetworkPolicy', name).spec;
    const pg = policy('postgres-from-inferq');
    expect(pg.podSelector.matchLabels).toEqual({ 'cnpg.io/cluster': cluster().metadata.name });
    const fromOperator = pg.ingress.find((r: any) =>
      r.from.some((f: any) => f.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'cnpg-system'),
    );
    expect(fromOperator.ports.map((p: { port: number }) => p.port).sort()).toEqual([5432, 8000]);
    expect(fromOperator.from.some((f: any) => f.podSelector?.matchLabels?.['cnpg.io/cluster'] === cluster().metadata.name)).toBe(true);
    for (const [name, label, ports] of [
      ['redis-from-inferq', 'redis', [6379, 26379]],
      ['minio-from-inferq', 'minio', [9000]],
    ] as const) {
      const rule = policy(name).ingress[0];
      expect(
        rule.from.some((f: any) => f.podSelector?.matchLabels?.['app.kubernetes.io/name'] === label),
        name,
      ).toBe(true);
      expect(rule.ports.map((p: { port: number }) => p.port)).toEqual(ports);
    }
  });
});

describe('k8s overlay onprem: the Sentinel group its scripts make, run here', () => {
  // The scripts and redis.conf of the render's redis-config ConfigMap, run with Debian's redis-server as three
  // nodes on 127.0.0.2-4 (one address a pod; the ports are this run's), as the StatefulSet's env gives them.
  const children: ChildProcess[] = [];
  let dir = '';
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('forms a group on pod 0, fails over when the primary dies, and takes the restarted primary back as a replica', async () => {
    const objects = rendered.get('onprem') ?? [];
    const [config] = findGenerated(objects, 'ConfigMap', 'redis-config');
    const findExecutable = createExecutableFinder(process.env.PATH);
    const server = await resolveDebianBinary(REDIS_SERVER, { findExecutable, log: (line) => console.log(line) });
    const cli = findExecutable('redis-cli');
    if (!cli) throw new Error('redis-cli not found (Debian package redis-tools)');
    dir = await mkdtemp(join(tmpdir(), 'inferq-sentinel-'));
    const [etc, bin] = [join(dir, 'etc'), join(dir, 'bin')];
    await mkdir(etc);
    await mkdir(bin);
    for (const [name, text] of Object.entries(config?.data ?? {})) await writeFile(join(etc, name), text);
    await symlink(server, join(bin, 'redis-server'));
    await symlink(cli, join(bin, 'redis-cli'));
    const [redisPort, sentinelPort] = [String(await findFreePort()), String(await findFreePort())];
    const hosts = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
    const password = 'sentinel-group-check';
    const common = {
      PATH: `${bin}:${process.env.PATH}`,
      REDIS_NODES: hosts.join(' '),
      REDIS_GROUP: 'inferq',
      REDIS_PORT: redisPort,
      SENTINEL_PORT: sentinelPort,
      SENTINEL_QUORUM: '2',
      SENTINEL_DOWN_AFTER_MS: '1000',
      // A split vote is held again after twice this (the pods' 60 s would outlast the test on a loaded machine).
      SENTINEL_FAILOVER_TIMEOUT_MS: '5000',
      REDIS_CONF: join(etc, 'redis.conf'),
      REDIS_PASSWORD: password,
      REDISCLI_AUTH: password,
    };
    const nodeEnv = async (host: string) => {
      const home = join(dir, host);
      await mkdir(join(home, 'run'), { recursive: true });
      return { ...common, SELF: host, BIND: host, RUN_DIR: join(home, 'run'), DATA_DIR: home, SENTINEL_CONF: join(home, 'sentinel.conf') };
    };
    const ask = (host: string, port: string, ...args: string[]) =>
      run(cli, ['--no-auth-warning', '-h', host, '-p', port, ...args], { env: { ...process.env, REDISCLI_AUTH: password }, timeout: 3_000 }).then(
        (r) => r.stdout.trim(),
        () => '',
      );
    const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => {
      for (const deadline = Date.now() + timeoutMs; !(await check()); await delay(100))
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    };
    const startScript = async (host: string, script: string) => {
      const child = spawn('sh', [join(etc, script)], { env: await nodeEnv(host), stdio: 'ignore' });
      children.push(child);
      return child;
    };
    const primary = async () => (await ask(hosts[1]!, sentinelPort, 'sentinel', 'get-master-addr-by-name', 'inferq')).split('\n')[0];
    const role = async (host: string) => (await ask(host, redisPort, 'role')).split('\n')[0];

    // Pods start in parallel, each its Sentinel (the native sidecar) first.
    const redis = new Map<string, ChildProcess>();
    for (const host of hosts) {
      await startScript(host, 'sentinel-start.sh');
      await until(`the Sentinel on ${host}`, async () => (await ask(host, sentinelPort, 'ping')) === 'PONG');
      redis.set(host, await startScript(host, 'redis-start.sh'));
    }
    await until('a primary and two replicas, seen by three Sentinels', async () => {
      const info = (await ask(hosts[1]!, sentinelPort, 'sentinel', 'master', 'inferq')).split('\n');
      const field = (name: string) => info[info.indexOf(name) + 1];
      return field('ip') === hosts[0] && field('num-slaves') === '2' && field('num-other-sentinels') === '2';
    });
    expect(await Promise.all(hosts.map(role))).toEqual(['master', 'slave', 'slave']);
    // A replica says `slave` as soon as it is configured; the primary counts it toward min-replicas-to-write only once
    // its first sync is done and it has acknowledged (NOREPLICAS until then).
    await until('the primary to take a write', async () => (await ask(hosts[0]!, redisPort, 'set', 'accepted', 'kept')) === 'OK');
    expect(await ask(hosts[0]!, redisPort, 'wait', '2', '5000')).toBe('2');

    redis.get(hosts[0]!)!.kill('SIGKILL');
    await until('a replica promoted', async () => hosts.slice(1).includes((await primary()) ?? ''));
    const promoted = (await primary())!;
    expect(await ask(promoted, redisPort, 'get', 'accepted')).toBe('kept');

    await startScript(hosts[0]!, 'redis-start.sh');
    await until('the old primary back as a replica of the new one', async () => {
      const info = await ask(hosts[0]!, redisPort, 'info', 'replication');
      return (await role(hosts[0]!)) === 'slave' && info.includes(`master_host:${promoted}`) && info.includes('master_link_status:up');
    });
    expect(await primary()).toBe(promoted);
  }, 240_000);
});

describe('k8s overlay eks: managed stores, IRSA', () => {
  const objects = () => rendered.get('eks') ?? [];

  it('runs no Redis, Postgres or MinIO of its own', () => {
    expect(
      objects()
        .filter((o) => o.kind === 'StatefulSet' || o.kind === 'Cluster')
        .map(id),
    ).toEqual([]);
  });

  it('holds no S3 keys anywhere and reaches S3 through the IRSA ServiceAccount', () => {
    const s3Key = /^S3_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)$/;
    for (const o of objects().filter((x) => x.kind === 'Secret' || x.kind === 'ConfigMap'))
      expect(
        Object.keys(o.data ?? {}).filter((k) => s3Key.test(k)),
        id(o),
      ).toEqual([]);
    for (const o of objects().filter((x) => WORKLOADS.has(x.kind)))
      for (const c of containersOf(o))
        expect(
          (c.env ?? []).filter((e) => s3Key.test(e.name)),
          `${id(o)} ${c.name}`,
        ).toEqual([]);
    const [config] = findGenerated(objects(), 'ConfigMap', 'inferq-config');
    expect(config?.data?.S3_ENDPOINT).toBeUndefined();
    expect(config?.data?.S3_FORCE_PATH_STYLE).toBe('false');
    const sa = find(objects(), 'ServiceAccount', 'inferq');
    expect(sa.metadata.annotations?.['eks.amazonaws.com/role-arn']).toBe('arn:aws:iam::<ACCOUNT_ID>:role/inferq');
    for (const [kind, name] of [
      ['Deployment', 'inferq-api'],
      ['Deployment', 'inferq-worker'],
      ['Job', 'inferq-migrate'],
    ] as const) {
      expect(podTemplate(find(objects(), kind, name)).spec.serviceAccountName, name).toBe('inferq');
    }
  });

  it('speaks TLS to ElastiCache and RDS, trusting the RDS CA bundle', () => {
    const [secret] = findGenerated(objects(), 'Secret', 'inferq-secrets');
    expect(secretValue(secret!, 'REDIS_URL')).toMatch(/^rediss:\/\//);
    expect(new URL(secretValue(secret!, 'DATABASE_URL').replace(/<[A-Z_]+>/g, 'placeholder')).searchParams.get('sslmode')).toBe('require');
    for (const [kind, name] of [
      ['Deployment', 'inferq-api'],
      ['Deployment', 'inferq-worker'],
      ['Job', 'inferq-migrate'],
    ] as const) {
      const o = find(objects(), kind, name);
      const [c] = podTemplate(o).spec.containers;
      const caPath = c?.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value ?? '';
      const mount = c?.volumeMounts?.find((m) => caPath.startsWith(`${m.mountPath}/`));
      const volume = podTemplate(o).spec.volumes?.find((v) => v.name === mount?.name);
      expect(volume?.configMap?.name, name).toMatch(/^rds-ca-/);
    }
  });

  it('fronts the API with an ALB that health-checks /readyz on pod IPs', () => {
    const ing = find(objects(), 'Ingress', 'inferq');
    expect(ing.spec.ingressClassName).toBe('alb');
    expect(ing.metadata.annotations).toMatchObject({
      'alb.ingress.kubernetes.io/target-type': 'ip',
      'alb.ingress.kubernetes.io/healthcheck-path': '/readyz',
      'alb.ingress.kubernetes.io/scheme': expect.stringMatching(/^(internet-facing|internal)$/),
      'alb.ingress.kubernetes.io/certificate-arn': expect.stringMatching(/^arn:aws:acm:/),
    });
  });
});
