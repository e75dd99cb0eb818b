import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { TASK_QUEUES } from '@petsing/workflows';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The Kubernetes deployment (deploy/kubernetes, deploy/README.md), checked without a cluster. deploy/validate.py
 * builds each kustomization as `kubectl apply -k` would and validates every document: Kubernetes' kinds against
 * kubernetes-validate's schemas (strict, two Kubernetes versions), KEDA's against deploy/schemas. Then the rules no
 * schema knows: what each process needs (commands, probes, ports, writable paths, secrets) and how the objects
 * refer to each other.
 */

type Labels = Record<string, string>;
type Metadata = { name: string; namespace?: string; labels?: Labels; annotations?: Labels };
type Doc = { apiVersion: string; kind: string; metadata: Metadata; spec?: unknown; data?: Record<string, string>; stringData?: Record<string, string> };
type SecretKeyRef = { name: string; key: string; optional?: boolean };
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: SecretKeyRef } };
type Probe = { httpGet?: { path: string; port: string | number } };
type Container = {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: object }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  nodeSelector?: Labels;
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
};
type Workload = Doc & { spec: { replicas?: number; selector?: { matchLabels: Labels }; template: { metadata: { labels: Labels; annotations?: Labels }; spec: PodSpec } } };
type ScaledObject = Doc & {
  spec: {
    scaleTargetRef: { kind?: string; name: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
    cooldownPeriod?: number;
    triggers: { type: string; metadata: Record<string, string>; authenticationRef?: { name: string } }[];
  };
};
type Report = {
  ok: boolean;
  tools: Record<string, string>;
  targets: { target: string; documents: { kind: string; name: string; validatedBy: string; errors: string[]; object: Doc }[] }[];
};

const BASE = 'deploy/kubernetes/base';
const CPU_ONLY = 'deploy/kubernetes/cpu-only';
const SECRET_EXAMPLE = 'deploy/kubernetes/secret.example.yaml';
/** The render activity's startToCloseTimeout (workflows/src/workflows/render-video.workflow.ts): 15 minutes. */
const RENDER_TIMEOUT_SECONDS = 15 * 60;
/** Where each process serves its metrics (issue 25's metric catalogue): API, control worker, render node. */
const METRICS_PORTS = { api: 9464, 'control-worker': 9465, 'render-gpu': 9466, 'render-cpu': 9466 } as const;
/** Variables set for tools the processes run, not petsing's own (so not in the README's tables). */
const TOOL_VARIABLES = new Set(['XDG_CACHE_HOME', 'CUDA_CACHE_PATH']);

let report: Report;
let status: number | null;
let stderr: string;

function documents(target: string): Doc[] {
  const found = report.targets.find((entry) => entry.target === target);
  if (!found) throw new Error(`validate.py reported no target ${target}`);
  return found.documents.map((document) => document.object);
}
const ofKind = <T extends Doc = Doc>(docs: Doc[], kind: string) => docs.filter((doc) => doc.kind === kind) as T[];
function named<T extends Doc = Doc>(docs: Doc[], kind: string, name: string): T {
  const found = docs.find((doc) => doc.kind === kind && doc.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found as T;
}
const workloads = (docs: Doc[]) => [...ofKind<Workload>(docs, 'Deployment'), ...ofKind<Workload>(docs, 'Job')];
const component = (workload: Workload) => workload.spec.template.metadata.labels['app.kubernetes.io/component'] ?? '';
const matches = (selector: Labels, labels: Labels) => Object.entries(selector).every(([key, value]) => labels[key] === value);
/** A ConfigMap by the name the manifests use; kustomize's generator appends a content hash. */
function configMap(docs: Doc[], name: string): Record<string, string> {
  const found = ofKind(docs, 'ConfigMap').find((doc) => doc.metadata.name === name || doc.metadata.name.startsWith(`${name}-`));
  if (!found?.data) throw new Error(`no ConfigMap ${name}`);
  return found.data;
}
/** The environment a container gets: from its ConfigMaps (by value) and its own entries (value or secret reference). */
function environment(docs: Doc[], container: Container): Map<string, { value?: string; secret?: SecretKeyRef }> {
  const env = new Map<string, { value?: string; secret?: SecretKeyRef }>();
  for (const source of container.envFrom ?? []) {
    if (source.secretRef) throw new Error(`${container.name}: envFrom a Secret hands over every key; name each one instead`);
    const data = ofKind(docs, 'ConfigMap').find((doc) => doc.metadata.name === source.configMapRef?.name)?.data;
    if (!data) throw new Error(`${container.name}: envFrom names a ConfigMap that is not there: ${source.configMapRef?.name}`);
    for (const [name, value] of Object.entries(data)) env.set(name, { value });
  }
  for (const entry of container.env ?? []) {
    const secret = entry.valueFrom?.secretKeyRef;
    env.set(entry.name, secret ? { secret } : { value: entry.value ?? '' });
  }
  return env;
}
const secretKeys = () => Object.keys(named(readSecretExample(), 'Secret', 'petsing-secrets').stringData ?? {});
const readSecretExample = () => documents(SECRET_EXAMPLE);

function validate(targets: string[] = []): { report: Report; status: number | null; stderr: string } {
  const run = spawnSync('python3', ['deploy/validate.py', '--json', ...targets], { encoding: 'utf8', timeout: 60_000 });
  if (run.status === 2 || !run.stdout) throw new Error(`deploy/validate.py could not run (pip install -r deploy/requirements.txt):\n${run.stderr}`);
  return { report: JSON.parse(run.stdout) as Report, status: run.status, stderr: run.stderr };
}

beforeAll(() => {
  ({ report, status, stderr } = validate());
});

describe('deploy/kubernetes', () => {
  it('builds, and every document is valid against its schema (Kubernetes or KEDA)', () => {
    expect(report.tools['kubernetes-validate']).toBeTruthy();
    const failures = report.targets.flatMap((target) =>
      target.documents.filter((document) => document.errors.length > 0).map((document) => `${target.target}: ${document.kind}/${document.name}: ${document.errors.join('; ')}`),
    );
    expect(failures).toEqual([]);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    // Nothing passes unchecked: every kind had a schema.
    expect(report.targets.flatMap((target) => target.documents.filter((document) => document.validatedBy === 'none'))).toEqual([]);
    expect(report.targets.map((target) => target.target)).toEqual([BASE, CPU_ONLY, SECRET_EXAMPLE]);
  });

  it('holds each process, its autoscaler and its disruption budget; the cpu-only variant has no GPU nodes', () => {
    const base = documents(BASE);
    expect(ofKind(base, 'Deployment').map((doc) => doc.metadata.name).sort()).toEqual(['petsing-api', 'petsing-control-worker', 'petsing-render-cpu', 'petsing-render-gpu']);
    expect(ofKind(base, 'Job').map((doc) => doc.metadata.name)).toEqual(['petsing-migrate']);
    expect(ofKind(base, 'Service').map((doc) => doc.metadata.name)).toEqual(['petsing-api']);
    for (const docs of [base, documents(CPU_ONLY)]) {
      // Every Deployment has exactly one PodDisruptionBudget, and every budget selects one Deployment's pods.
      const budgets = ofKind<Doc & { spec: { selector: { matchLabels: Labels } } }>(docs, 'PodDisruptionBudget');
      for (const deployment of ofKind<Workload>(docs, 'Deployment')) {
        const covering = budgets.filter((budget) => matches(budget.spec.selector.matchLabels, deployment.spec.template.metadata.labels));
        expect(covering.map((budget) => budget.metadata.name), deployment.metadata.name).toHaveLength(1);
      }
      for (const budget of budgets) {
        expect(ofKind<Workload>(docs, 'Deployment').filter((deployment) => matches(budget.spec.selector.matchLabels, deployment.spec.template.metadata.labels)), budget.metadata.name).toHaveLength(1);
      }
      // Everything lands in one namespace.
      expect(new Set(docs.filter((doc) => doc.kind !== 'Namespace').map((doc) => doc.metadata.namespace))).toEqual(new Set(['petsing']));
    }
    const cpuOnly = documents(CPU_ONLY);
    expect(ofKind(cpuOnly, 'Deployment').map((doc) => doc.metadata.name).sort()).toEqual(['petsing-api', 'petsing-control-worker', 'petsing-render-cpu']);
    const [scaled] = ofKind<ScaledObject>(cpuOnly, 'ScaledObject');
    expect(scaled?.spec.scaleTargetRef.name).toBe('petsing-render-cpu');
    // Photo checks need a render node at all times.
    expect(scaled?.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    // A count that KEDA owns is not in the Deployment: an apply would reset it.
    expect(named<Workload>(cpuOnly, 'Deployment', 'petsing-render-cpu').spec.replicas).toBeUndefined();
    expect(named<Workload>(base, 'Deployment', 'petsing-render-gpu').spec.replicas).toBeUndefined();
    expect(named<Workload>(base, 'Deployment', 'petsing-api').spec.replicas).toBeUndefined();
  });

  it('runs each process with a command the CLI has, through the image\'s tini entrypoint', () => {
    const cli = readFileSync('control-plane/src/cli/main.ts', 'utf8');
    const commands = { api: ['petsing', 'api'], 'control-worker': ['petsing', 'worker', 'control'], 'render-gpu': ['petsing', 'worker', 'render'], 'render-cpu': ['petsing', 'worker', 'render'], migrate: ['petsing', 'migrate'] };
    for (const workload of workloads(documents(BASE))) {
      const [container] = workload.spec.template.spec.containers;
      expect(container?.command, workload.metadata.name).toBeUndefined();
      expect(container?.args, workload.metadata.name).toEqual(commands[component(workload) as keyof typeof commands]);
      expect(cli).toContain(`.command('${container?.args?.at(-1)}')`);
    }
    expect(named<Workload>(documents(BASE), 'Deployment', 'petsing-render-gpu').spec.template.spec.containers[0]?.image).toMatch(/\/render-node:/);
    expect(named<Workload>(documents(BASE), 'Deployment', 'petsing-render-cpu').spec.template.spec.containers[0]?.image).toMatch(/\/control-plane:/);
  });

  it('runs every container as non-root, read-only, unprivileged, writing only to emptyDirs at /tmp and DATA_DIR, with requests and limits', () => {
    for (const target of [BASE, CPU_ONLY]) {
      const docs = documents(target);
      const dataDir = configMap(docs, 'petsing-shared').DATA_DIR ?? '(DATA_DIR unset)';
      expect(dataDir).toBe('/data');
      for (const workload of workloads(docs)) {
        const pod = workload.spec.template.spec;
        const where = `${target}: ${workload.metadata.name}`;
        expect(pod.securityContext?.runAsNonRoot, where).toBe(true);
        expect(pod.securityContext?.runAsUser, where).toBeGreaterThan(0);
        expect(pod.securityContext?.seccompProfile?.type, where).toBe('RuntimeDefault');
        expect(pod.automountServiceAccountToken, where).toBe(false);
        for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
          expect(container.securityContext, where).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
          const mounts = new Map((container.volumeMounts ?? []).map((mount) => [mount.mountPath, mount.name]));
          for (const path of ['/tmp', dataDir]) {
            const volume = pod.volumes?.find((candidate) => candidate.name === mounts.get(path));
            expect(volume?.emptyDir, `${where}: ${path} is an emptyDir`).toBeDefined();
          }
          expect(Object.keys(container.resources?.requests ?? {}), where).toEqual(expect.arrayContaining(['cpu', 'memory']));
          expect(Object.keys(container.resources?.limits ?? {}), where).toContain('memory');
        }
      }
    }
  });

  it('probes the API on /health (liveness) and /health/ready (readiness), the workers on their metrics port, and exposes each metrics port', () => {
    const docs = documents(BASE);
    for (const workload of ofKind<Workload>(docs, 'Deployment')) {
      const [container] = workload.spec.template.spec.containers;
      const ports = new Map((container?.ports ?? []).map((port) => [port.name, port.containerPort]));
      const role = component(workload) as keyof typeof METRICS_PORTS;
      expect(ports.get('metrics'), workload.metadata.name).toBe(METRICS_PORTS[role]);
      expect(workload.spec.template.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(METRICS_PORTS[role]), 'prometheus.io/path': '/metrics' });
      for (const probe of [container?.startupProbe, container?.livenessProbe, container?.readinessProbe]) {
        expect(probe?.httpGet, workload.metadata.name).toBeDefined();
        expect(ports.has(String(probe?.httpGet?.port)), `${workload.metadata.name} probes a port it names`).toBe(true);
      }
      if (role === 'api') {
        expect(container?.livenessProbe?.httpGet).toEqual({ path: '/health', port: 'http' });
        expect(container?.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' });
        expect(ports.get('http')).toBe(Number(environment(docs, container!).get('PORT')?.value));
      } else {
        expect(container?.livenessProbe?.httpGet).toEqual({ path: '/metrics', port: 'metrics' });
      }
    }
    const service = named<Doc & { spec: { selector: Labels; ports: { name: string; targetPort: string }[] } }>(docs, 'Service', 'petsing-api');
    expect(matches(service.spec.selector, named<Workload>(docs, 'Deployment', 'petsing-api').spec.template.metadata.labels)).toBe(true);
    expect(service.spec.ports.map((port) => port.targetPort)).toEqual(['http', 'metrics']);
    const hpa = named<Doc & { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; metrics: { resource?: { name: string } }[] } }>(docs, 'HorizontalPodAutoscaler', 'petsing-api');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'petsing-api' });
    expect(hpa.spec.metrics.map((metric) => metric.resource?.name)).toEqual(['cpu']);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
  });

  it('puts GPU render nodes on GPU nodes with one GPU each, CPU ones anywhere, both given a render\'s length to stop', () => {
    const docs = documents(BASE);
    const gpu = named<Workload>(docs, 'Deployment', 'petsing-render-gpu').spec.template.spec;
    expect(gpu.containers[0]?.resources?.limits?.['nvidia.com/gpu']).toBe(1);
    expect(Object.keys(gpu.nodeSelector ?? {})).not.toHaveLength(0);
    expect(gpu.tolerations).toContainEqual({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
    expect(environment(docs, gpu.containers[0]!).get('RENDER_EXECUTION_PROVIDER')?.value).toBe('cuda');
    expect(environment(docs, gpu.containers[0]!).get('RENDER_CUDA_FALLBACK')?.value).toBe('refuse');
    const cpu = named<Workload>(docs, 'Deployment', 'petsing-render-cpu').spec.template.spec;
    expect(JSON.stringify(cpu)).not.toContain('nvidia.com/gpu');
    expect(environment(docs, cpu.containers[0]!).get('RENDER_EXECUTION_PROVIDER')?.value).toBe('cpu');
    for (const pod of [gpu, cpu]) expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(RENDER_TIMEOUT_SECONDS);
  });

  it('scales the GPU render nodes with KEDA\'s Temporal scaler on the render queue\'s backlog, down to zero', () => {
    const docs = documents(BASE);
    const [scaled, ...others] = ofKind<ScaledObject>(docs, 'ScaledObject');
    expect(others).toEqual([]);
    expect(scaled!.spec.scaleTargetRef).toMatchObject({ name: 'petsing-render-gpu' });
    named(docs, 'Deployment', scaled!.spec.scaleTargetRef.name);
    expect(scaled!.spec.minReplicaCount).toBe(0);
    expect(scaled!.spec.maxReplicaCount).toBeGreaterThan(0);
    // Not to zero while the last render picked up may still run.
    expect(scaled!.spec.cooldownPeriod).toBeGreaterThanOrEqual(RENDER_TIMEOUT_SECONDS);
    const [trigger] = scaled!.spec.triggers;
    const shared = configMap(docs, 'petsing-shared');
    expect(trigger).toMatchObject({
      type: 'temporal',
      metadata: {
        taskQueue: TASK_QUEUES.render,
        queueTypes: 'activity',
        targetQueueSize: '1',
        activationTargetQueueSize: '0',
        // The same Temporal as the workers: copied from the ConfigMap by kustomize's replacements.
        endpoint: shared.TEMPORAL_ADDRESS,
        namespace: shared.TEMPORAL_NAMESPACE,
      },
    });
    const auth = named<Doc & { spec: { secretTargetRef: { parameter: string; name: string; key: string }[] } }>(docs, 'TriggerAuthentication', trigger!.authenticationRef!.name);
    expect(auth.spec.secretTargetRef).toEqual([{ parameter: 'apiKey', name: 'petsing-secrets', key: 'TEMPORAL_API_KEY' }]);
    expect(secretKeys()).toContain('TEMPORAL_API_KEY');
  });

  it('follows an overlay\'s Temporal settings into the ScaledObject when the overlay includes the component (deploy/README.md "Install")', () => {
    const overlay = mkdtempSync(join(tmpdir(), 'petsing-overlay-'));
    try {
      const fromOverlay = (path: string) => relative(overlay, resolve(path));
      writeFileSync(join(overlay, 'kustomization.yaml'), [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${fromOverlay(BASE)}]`,
        'configMapGenerator:',
        '  - { name: petsing-shared, behavior: merge, literals: [TEMPORAL_ADDRESS=prod.a1b2c.tmprl.cloud:7233, TEMPORAL_NAMESPACE=prod.a1b2c] }',
        `components: [${fromOverlay('deploy/kubernetes/components/temporal-scaler')}]`,
        '',
      ].join('\n'));
      const built = validate([overlay]);
      expect(built.report.targets[0]?.documents.filter((document) => document.errors.length > 0)).toEqual([]);
      const [scaled] = ofKind<ScaledObject>(built.report.targets[0]!.documents.map((document) => document.object), 'ScaledObject');
      expect(scaled?.spec.triggers[0]?.metadata).toMatchObject({ endpoint: 'prod.a1b2c.tmprl.cloud:7233', namespace: 'prod.a1b2c' });
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  it('runs in external mode only, and hands each process only the secrets it needs', () => {
    for (const target of [BASE, CPU_ONLY]) {
      const docs = documents(target);
      for (const workload of workloads(docs)) {
        const env = environment(docs, workload.spec.template.spec.containers[0]!);
        const where = `${target}: ${workload.metadata.name}`;
        // Unset, these would start an embedded dev server or keep media on the pod's emptyDir.
        if (component(workload) !== 'migrate') for (const name of ['TEMPORAL_ADDRESS', 'S3_BUCKET']) expect(env.get(name)?.value, `${where}: ${name}`).toBeTruthy();
        const secrets = [...env].flatMap(([variable, entry]) => (entry.secret ? [{ variable, ...entry.secret }] : []));
        for (const secret of secrets) {
          // One Secret, its keys named after the variables they fill, each listed in secret.example.yaml.
          expect(secret, where).toMatchObject({ name: 'petsing-secrets', key: secret.variable });
          expect(secretKeys(), where).toContain(secret.key);
        }
        const required = secrets.filter((secret) => !secret.optional).map((secret) => secret.key).sort();
        if (component(workload).startsWith('render')) {
          // Render nodes never see the database (docs/deployment.md).
          expect(secrets.map((secret) => secret.key).sort(), where).toEqual(['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'TEMPORAL_API_KEY']);
          expect(env.has('DATABASE_URL'), where).toBe(false);
        } else {
          // Unset, DATABASE_URL would open an embedded PGlite on the pod's emptyDir: required, so the pod cannot start without it.
          expect(required, where).toEqual(['DATABASE_URL', 'SIGNING_SECRET']);
        }
      }
    }
  });

  it('keeps secrets out of the repository and names only documented variables', () => {
    const secretNames = new Set(secretKeys());
    for (const target of [BASE, CPU_ONLY]) {
      const docs = documents(target);
      // The Secret is created out of band; the kustomization never carries one.
      expect(ofKind(docs, 'Secret'), target).toEqual([]);
      for (const map of ofKind(docs, 'ConfigMap')) expect(Object.keys(map.data ?? {}).filter((name) => secretNames.has(name)), map.metadata.name).toEqual([]);
    }
    const values = named(readSecretExample(), 'Secret', 'petsing-secrets').stringData ?? {};
    expect(Object.entries(values).filter(([, value]) => !value.includes('CHANGE_ME'))).toEqual([]);

    const documented = `${readFileSync('README.md', 'utf8')}\n${readFileSync('.env.example', 'utf8')}`;
    const names = new Set<string>(secretNames);
    for (const docs of [documents(BASE), documents(CPU_ONLY)]) {
      for (const map of ofKind(docs, 'ConfigMap')) for (const name of Object.keys(map.data ?? {})) names.add(name);
      for (const workload of workloads(docs)) for (const container of workload.spec.template.spec.containers) for (const entry of container.env ?? []) names.add(entry.name);
    }
    const undocumented = [...names].filter((name) => !TOOL_VARIABLES.has(name) && !documented.includes(`\`${name}\``) && !documented.includes(`# ${name}=`));
    expect(undocumented).toEqual([]);
  });
});
