import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';

// The on-prem overlay's render (k8s/rendered/onprem.yaml, kept equal to
// `kustomize build` by k8s-manifests.test.ts), made playable by podman 4.3's
// `podman kube play` on this machine's network. Each change is what podman
// or this machine needs, never a setting of ours:
// - the images are the ones just built (the worker's CPU image in place of
//   the CUDA one, WORKER_DEVICES=cpu: no GPU here), the services this run's;
// - the pods share the host's network (only loopback is ours to use), so each
//   listens on a free port, and ports and probes name that number: podman
//   refuses port mappings on the host's network and maps a probe on a named
//   port to port 0;
// - the Secret becomes a podman secret holding its `.data` as JSON, the one
//   form kube play reads for secretKeyRef;
// - GPU resources and scheduling (nodeSelector, tolerations) go: no device
//   plugin and one node.
// What kube play skips (Services, StatefulSets, Jobs, HPA, PDBs, NetworkPolicies,
// Ingresses) is not played; the migrate Job's command runs with `podman run`.

type Doc = Record<string, any>;

const RENDERED = resolve(import.meta.dirname, '../../k8s/rendered/onprem.yaml');

export interface PlayOptions {
  images: { api: string; worker: string };
  /** ConfigMap entries that replace the render's (the run's S3 endpoint and bucket). */
  config: Record<string, string>;
  /** The Secret's entries (the run's database, Redis, keys). */
  secrets: Record<string, string>;
  apiPort: number;
  workerMetricsPort: number;
  /** Extra environment for the worker (quicker heartbeats and lock renewal for a test). */
  workerEnv?: Record<string, string>;
}

export interface Playable {
  /** The ConfigMap and both Deployments, for `podman kube play`. */
  yaml: string;
  secret: { name: string; json: string };
  /** The migrate Job's container command. */
  migrateCommand: string[];
}

export function playablePodSpecs(o: PlayOptions): Playable {
  const docs = parseAllDocuments(readFileSync(RENDERED, 'utf8')).map((d) => d.toJS() as Doc);
  const find = (kind: string, name: string) => {
    const doc = docs.find((d) => d.kind === kind && (d.metadata.name as string).startsWith(name));
    if (!doc) throw new Error(`no ${kind} ${name}* in ${RENDERED}`);
    return doc;
  };
  const config = find('ConfigMap', 'inferq-config');
  config.data = { ...config.data, ...o.config };
  const secret = find('Secret', 'inferq-secrets');
  const api = find('Deployment', 'inferq-api');
  const worker = find('Deployment', 'inferq-worker');
  const migrate = find('Job', 'inferq-migrate');

  playOnHost(api, o.images.api, 'PORT', o.apiPort);
  playOnHost(worker, o.images.worker, 'METRICS_PORT', o.workerMetricsPort, { WORKER_DEVICES: 'cpu', ...o.workerEnv });
  return {
    yaml: [config, api, worker].map((d) => stringify(d)).join('---\n'),
    secret: {
      name: secret.metadata.name as string,
      json: JSON.stringify(Object.fromEntries(Object.entries(o.secrets).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))),
    },
    migrateCommand: migrate.spec.template.spec.containers[0].command as string[],
  };
}

function playOnHost(deployment: Doc, image: string, portVar: string, port: number, env: Record<string, string> = {}): void {
  deployment.spec.replicas = 1;
  const pod = deployment.spec.template.spec;
  delete pod.nodeSelector;
  delete pod.tolerations;
  const c = pod.containers[0];
  c.image = image;
  delete c.ports;
  const set = { ...env, [portVar]: String(port) };
  c.env = [...(c.env as Doc[]).filter((e) => !(e.name in set)), ...Object.entries(set).map(([name, value]) => ({ name, value }))];
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) if (c[probe]?.httpGet) c[probe].httpGet.port = port;
  for (const kind of ['limits', 'requests']) if (c.resources?.[kind]) delete c.resources[kind]['nvidia.com/gpu'];
}
