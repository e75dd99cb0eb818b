import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3ObjectStore } from '../platform/src/storage/index.ts';
import { tracingSettings } from '../platform/src/tracing/index.ts';
import { loadControlPlaneConfig } from '../control-plane/src/config/env.ts';
import { createLogger } from '../control-plane/src/logging/logger.ts';
import type { AppContext } from '../control-plane/src/runtime/app-context.ts';
import { openAppContext } from '../control-plane/src/runtime/bootstrap.ts';
import { createTestAccount } from './support/accounts.ts';
import { createPostgresTestDatabase, type TestDatabase } from './support/database.ts';
import { apiCall, type Json } from './support/http.ts';
import { petPhoto } from './support/pet-photo.ts';
import { freePort, runPetsing, serviceProcessEnv, stopProcess, waitUntil, type PetsingProcess } from './support/processes.ts';
import { createTestNamespace } from './support/temporal.ts';

/** One span as an OTLP/JSON export carries it, with the service.name of its resource. */
type ReceivedSpan = {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
};

const SPAN_KIND = { server: 2, client: 3 } as const;

/** OTLP/JSON writes ids as hex (the JavaScript exporter does); base64, the protobuf JSON mapping's own, is read too. */
const hexId = (id: unknown) => (typeof id === 'string' && id !== '' ? (/^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex')) : undefined);

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
const attributeMap = (attributes: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]));

/**
 * An OTLP/HTTP receiver (POST /v1/traces, JSON: the service exports with OTEL_EXPORTER_OTLP_PROTOCOL=http/json),
 * keeping every span it is sent.
 */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; requests: () => number; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')) as {
        resourceSpans?: { resource?: { attributes?: { key: string; value: AnyValue }[] }; scopeSpans?: { scope?: { name?: string }; spans?: Json[] }[] }[];
      };
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributeMap(resourceSpans.resource?.attributes)['service.name']);
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              service,
              scope: scopeSpans.scope?.name ?? '',
              traceId: hexId(span.traceId)!,
              spanId: hexId(span.spanId)!,
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: attributeMap(span.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no receiver address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    spans,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** This process's environment for a child, without any OTEL_* variable of its own (each check names its own). */
function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));
}

/**
 * A process that does what the bin script does before the CLI (startTracing), then serves one HTTP request and
 * stops tracing; it prints whether it traced and how many OpenTelemetry modules it loaded.
 */
const TRACING_MODULE = pathToFileURL(join(import.meta.dirname, '..', 'platform', 'src', 'tracing', 'index.ts')).href;
const PROBE = `
  import { createRequire } from 'node:module';
  import { join } from 'node:path';
  const { startTracing, stopTracing, tracingActive } = await import(${JSON.stringify(TRACING_MODULE)});
  const traced = await startTracing({ serviceName: 'tracing-probe' });
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => res.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await (await fetch('http://127.0.0.1:' + server.address().port + '/probe')).text();
  await new Promise((resolve) => server.close(resolve));
  const active = tracingActive();
  await stopTracing();
  const loaded = Object.keys(createRequire(join(process.cwd(), 'probe.js')).cache).filter((path) => path.includes('@opentelemetry') || path.includes('import-in-the-middle'));
  console.log(JSON.stringify({ traced, active, openTelemetryModules: loaded.length }));
`;

async function runProbe(env: Record<string, string>): Promise<{ traced: boolean; active: boolean; openTelemetryModules: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
    env: { ...withoutOtel(process.env), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the tracing probe exited ${code}:\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('tracing settings (the standard OTEL_* variables)', () => {
  const endpoint = 'http://127.0.0.1:4318';
  it('is on only with an OTLP endpoint, and off when the SDK or the traces exporter is turned off', () => {
    expect(tracingSettings({})).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'petsing', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toEqual({ enabled: true, protocol: 'http/protobuf' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }))
      .toEqual({ enabled: true, protocol: 'http/json' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ enabled: false });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'false' })).toEqual({ enabled: true, protocol: 'http/protobuf' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' })).toEqual({ enabled: false });
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  it('loads and exports nothing without an endpoint (and exports the request when one is set)', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const off = await runProbe({ OTEL_SERVICE_NAME: 'tracing-probe', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      expect(off).toEqual({ traced: false, active: false, openTelemetryModules: 0 });
      const disabled = await runProbe({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SDK_DISABLED: 'true' });
      expect(disabled).toEqual({ traced: false, active: false, openTelemetryModules: 0 });
      expect(receiver.requests()).toBe(0);

      // The same probe with an endpoint: the receiver is sent the server span of its one request.
      const on = await runProbe({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      expect(on).toMatchObject({ traced: true, active: true });
      expect(on.openTelemetryModules).toBeGreaterThan(0);
      expect(receiver.spans.filter((span) => span.kind === SPAN_KIND.server).map((span) => [span.service, span.attributes['url.path'] ?? span.attributes['http.target']]))
        .toEqual([['tracing-probe', '/probe']]);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});

/**
 * One trace from the API to the render node, on the embedded service as operators run it (`petsing start`, with
 * Postgres and S3): POST /v1/videos (the HTTP server span, Express's and pg's spans under it) starts the renderVideo
 * workflow (StartWorkflow, from the control plane's Temporal client), which runs (RunWorkflow, exported from the
 * workflow sandbox through the worker's sink) and schedules the render (StartActivity), which the render worker runs
 * (RunActivity:renderLipSync) and whose upload to S3 is HTTP client spans under it. The request's log line carries
 * the trace's id.
 */
describe('traces of the embedded service', () => {
  let database: TestDatabase;
  let dataDir: string;
  let service: PetsingProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let baseUrl: string;
  let context: AppContext & { close(): Promise<void> };

  const api = (method: string, path: string, key: string, body?: unknown) => apiCall(baseUrl, method, path, key, body);

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    database = await createPostgresTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-tracing-'));
    const { address, namespace } = await createTestNamespace();
    const s3 = { S3_ENDPOINT: inject('s3Endpoint'), S3_BUCKET: `tracing-${namespace.slice(-8).toLowerCase()}`, S3_ACCESS_KEY_ID: 'test', S3_SECRET_ACCESS_KEY: 'test', S3_FORCE_PATH_STYLE: 'true' };
    await new S3ObjectStore({ endpoint: s3.S3_ENDPOINT, bucket: s3.S3_BUCKET, region: 'us-east-1', accessKeyId: 'test', secretAccessKey: 'test', forcePathStyle: true }).ensureBucket();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
      DATABASE_URL: database.url!,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      ...s3,
      LOG_LEVEL: 'info',
      RENDER_OUTPUT_SIZE: '128',
      RENDER_FPS: '10',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
    };
    service = runPetsing(['start'], {
      ...withoutOtel(serviceProcessEnv(env)),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    await service.serving(baseUrl);
    context = await openAppContext(loadControlPlaneConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'), { database });
  }, 240_000);

  afterAll(async () => {
    await stopProcess(service?.child);
    await context?.close();
    await database?.drop();
    await receiver?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('joins POST /v1/videos, the renderVideo workflow and the render activity with its upload in one trace', async () => {
    const owner = await createTestAccount(context, 'tracing@example.com', 1);
    const photo = new FormData();
    photo.append('image', new Blob([await petPhoto(384)], { type: 'image/png' }), 'pet.png');
    const checked = await api('POST', '/v1/images', owner.readWrite, photo);
    expect(checked.status, JSON.stringify(checked.body)).toBe(201);
    const created = await api('POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: checked.body.id });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await waitUntil('the video to complete', async () => {
      const video = (await api('GET', `/v1/videos/${created.body.id}`, owner.readOnly)).body;
      if (video.status === 'failed') throw new Error(`the render failed: ${JSON.stringify(video)}\n${service!.output().slice(-20_000)}`);
      return video.status === 'completed';
    }, 240_000);

    // The request's server span (its route from Express), and the trace it began.
    const isCreate = (span: ReceivedSpan) =>
      span.kind === SPAN_KIND.server && span.attributes['http.request.method'] === 'POST' && span.attributes['http.route'] === '/v1/videos';
    await waitUntil('the server span of POST /v1/videos', () => receiver.spans.some(isCreate), 30_000);
    const creates = receiver.spans.filter(isCreate);
    expect(creates).toHaveLength(1);
    const request = creates[0]!;
    expect(request.service).toBe('petsing-api');
    const inTrace = () => receiver.spans.filter((span) => span.traceId === request.traceId);
    const named = (name: string) => inTrace().filter((span) => span.name === name);
    await waitUntil('the render activity and its workflow in the request\'s trace', () => named('RunActivity:renderLipSync').length > 0 && named('RunWorkflow:renderVideo').length > 0, 30_000);

    // Each span's parent chain, so the trace is one tree and not spans that merely share an id.
    const byId = new Map(inTrace().map((span) => [span.spanId, span]));
    const ancestors = (span: ReceivedSpan): string[] => {
      const names: string[] = [];
      for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent; parent = parent.parentSpanId ? byId.get(parent.parentSpanId) : undefined) names.push(parent.name);
      return names;
    };
    const [startWorkflow] = named('StartWorkflow:renderVideo');
    expect(startWorkflow, 'StartWorkflow:renderVideo in the request\'s trace').toBeDefined();
    expect(ancestors(startWorkflow!).at(-1)).toBe(request.name);
    const [runWorkflow] = named('RunWorkflow:renderVideo');
    expect(ancestors(runWorkflow!)).toContain('StartWorkflow:renderVideo');
    const renders = named('RunActivity:renderLipSync');
    expect(renders.length).toBeGreaterThanOrEqual(1);
    for (const render of renders) {
      expect(ancestors(render)).toEqual(expect.arrayContaining(['StartActivity:renderLipSync', 'RunWorkflow:renderVideo', 'StartWorkflow:renderVideo', request.name]));
      expect(render.attributes).toMatchObject({ temporalActivityId: expect.any(String), temporalWorkflowId: expect.stringContaining(created.body.id) });
    }
    // The upload of the render: requests to S3 made inside the render activity.
    const s3Host = new URL(inject('s3Endpoint')).host;
    const uploads = inTrace().filter((span) =>
      span.kind === SPAN_KIND.client && ['PUT', 'POST'].includes(String(span.attributes['http.request.method'])) && String(span.attributes['server.address']) + ':' + String(span.attributes['server.port']) === s3Host
      && ancestors(span).includes('RunActivity:renderLipSync'));
    expect(uploads.length, 'HTTP client spans of the upload to S3 under RunActivity:renderLipSync').toBeGreaterThanOrEqual(1);
    // Express's and pg's spans of the request itself (the video stored before the workflow starts).
    const requestSpans = inTrace().filter((span) => ancestors(span).includes(request.name));
    expect(requestSpans.some((span) => span.scope.includes('instrumentation-express'))).toBe(true);
    expect(requestSpans.some((span) => span.attributes['db.system.name'] === 'postgresql' || span.attributes['db.system'] === 'postgresql')).toBe(true);
    // Every span of the trace is one of the processes petsing start supervises (on Postgres, the API and the control
    // worker apart): the API's request, the control worker's workflow, the render worker's render.
    expect(new Set(inTrace().map((span) => span.service))).toEqual(new Set(['petsing-api', 'petsing-control-worker', 'petsing-render-node']));
    expect(runWorkflow!.service).toBe('petsing-control-worker');
    for (const render of renders) expect(render.service).toBe('petsing-render-node');

    // The request's log line carries the trace and its server span.
    // Whole JSON lines (the kept output may begin mid-line).
    const lines = service!.output().split('\n').filter((line) => line.startsWith('{') && line.endsWith('}')).map((line) => JSON.parse(line) as Json);
    const logged = lines.filter((line) => line.msg === 'request completed' && line.req?.method === 'POST' && line.req?.url === '/v1/videos');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.trace_id).toBe(request.traceId);
    expect(typeof logged[0]!.span_id).toBe('string');
    // Lines logged outside any span carry none.
    expect(lines.some((line) => line.msg !== 'request completed' && line.trace_id === undefined)).toBe(true);
  }, 420_000);
});
