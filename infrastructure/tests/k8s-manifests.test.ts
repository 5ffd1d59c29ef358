import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
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
import { createExecutableFinder } from '@inferq/dev-stack';
import { createApiMetrics } from '../../apps/api/src/metrics/api-metrics.ts';

// Both overlays render with kustomize, every object passes its Kubernetes (or
// KEDA) schema, and the rules the deployment depends on hold: probes, limits,
// non-root, GPU placement, shutdown grace, the scaling signal, worker egress,
// and on EKS no in-cluster stores and no S3 keys.

const run = promisify(execFile);
const k8sDir = resolve(import.meta.dirname, '../../k8s');

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
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Shapes differ per kind; the schema test has checked them. */
  spec?: any;
  data?: Record<string, string>;
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
 * Renders an overlay as an operator would: in a copy of k8s/, with secrets.env
 * written from the committed example (and a stand-in RDS CA bundle on EKS).
 * Real secrets an operator left in the tree are not copied.
 */
async function render(kubectl: string, overlay: string, workDir: string): Promise<string> {
  const copy = join(workDir, overlay);
  await cp(k8sDir, copy, { recursive: true, filter: (src) => !['secrets.env', 'rds-ca.pem'].includes(basename(src)) });
  const overlayDir = join(copy, 'overlays', overlay);
  await writeFile(join(overlayDir, 'secrets.env'), await readFile(join(overlayDir, 'secrets.env.example'), 'utf8'));
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
const OVERLAYS = ['onprem', 'eks'];
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
    for (const o of workloads()) for (const c of containersOf(o)) expect(c.image, `${id(o)} ${c.name}`).toMatch(/^[a-z0-9.-]+(\/[a-z0-9._-]+)+:[\w.-]+$/);
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
    expect([...ports].filter((p) => ![53, 6379, 5432, 443, 9000, 4318].includes(p))).toEqual([]);
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
      // Step 1 brings up the in-cluster Postgres the Job migrates, and every NetworkPolicy (the default deny among them).
      ...objects()
        .filter((o) => ['postgres', 'redis', 'minio'].includes(o.metadata.name) || o.kind === 'NetworkPolicy')
        .map((o): [string, string] => [o.kind, o.metadata.name]),
    ];
    for (const [kind, name] of needed) expect(find(objects(), kind, name ?? '').metadata.labels?.['inferq.io/phase'], `${kind} ${name}`).toBe('prepare');
  });
});

describe('k8s overlay onprem: in-cluster stores', () => {
  const objects = () => rendered.get('onprem') ?? [];

  it('runs Redis with AOF and noeviction, from a mounted redis.conf, on a volume', () => {
    const [config] = findGenerated(objects(), 'ConfigMap', 'redis-config');
    const lines = (config?.data?.['redis.conf'] ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(lines).toContain('appendonly yes');
    expect(lines).toContain('maxmemory-policy noeviction');
    const redis = find(objects(), 'StatefulSet', 'redis');
    expect(podTemplate(redis).spec.volumes?.find((v) => v.configMap)?.configMap?.name).toBe(config?.metadata.name);
    expect(containersOf(redis)[0]?.args?.[0]).toBe('/etc/redis/redis.conf');
    for (const name of ['redis', 'postgres', 'minio']) expect(find(objects(), 'StatefulSet', name).spec.volumeClaimTemplates?.length, name).toBe(1);
  });

  it('creates the bucket inferq uses and points S3 at MinIO', () => {
    const [config] = findGenerated(objects(), 'ConfigMap', 'inferq-config');
    expect(config?.data).toMatchObject({ S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'true' });
    const job = find(objects(), 'Job', 'minio-create-bucket');
    expect(containersOf(job)[0]?.args).toEqual(['mb', '--ignore-existing', 'local/$(S3_BUCKET)']);
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

describe('k8s overlay eks: managed stores, IRSA', () => {
  const objects = () => rendered.get('eks') ?? [];

  it('runs no Redis, Postgres or MinIO of its own', () => {
    expect(
      objects()
        .filter((o) => o.kind === 'StatefulSet')
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
