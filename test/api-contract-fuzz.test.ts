import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';
import { freePort, PETSING_CLI, serviceProcessEnv, stopProcess, waitForHealth } from './support/processes.ts';

const run = promisify(execFile);

/** What every response must satisfy: no 5xx, and status, content type and body as /openapi.json documents them. */
const CHECKS = 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance';
/** A fixed seed makes a failure reproducible with the same command; the examples per operation keep the run short on two cores. */
const SEED = '20261126';
const EXAMPLES_PER_OPERATION = '10';

/**
 * Schemathesis (PyPI; installed by infra/setup-host.sh with PETSING_TEST_TOOLS=1) generates requests from
 * /openapi.json, valid and invalid, and checks every answer against the same document. The service is
 * `petsing start` on its embedded defaults (PGlite, local object store, Temporal dev server, both workers),
 * with Stripe pointed at the test suite's local Stripe so the payment operations are exercised too; each
 * credential family gets its own pass.
 */
describe('the /openapi.json contract, fuzzed by schemathesis', () => {
  let stripe: FakeStripe;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let service: ChildProcess | undefined;
  let output = '';
  let apiKey: string;
  let idToken: string;

  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [PETSING_CLI, '--json', ...args], { env })).stdout);

  beforeAll(async () => {
    stripe = await startFakeStripe();
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-fuzz-'));
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    env = serviceProcessEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_DEV_UI_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      RATE_LIMIT_WEB_MEDIA_PER_MINUTE: '100000',
      RENDER_OUTPUT_SIZE: '128',
      STRIPE_SECRET_KEY: 'sk_test_petsing_fuzz',
      STRIPE_WEBHOOK_SECRET: 'whsec_petsing_fuzz',
      STRIPE_API_BASE: stripe.apiBase,
    });
    service = spawn(process.execPath, [PETSING_CLI, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    service.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    service.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    await waitForHealth(service, baseUrl, () => output, 120_000);
    // A first start builds its template songs in the background and template requests wait for them (20 s and more
    // on a loaded machine, past schemathesis' 10 s read timeout): generated requests start once they are there.
    expect((await fetch(`${baseUrl}/templates`, { signal: AbortSignal.timeout(150_000) })).status).toBe(200);
    await petsing('users', 'create', '--email', 'fuzz@example.com');
    // A few credits: creates past them answer 402, so the render node is not buried in generated videos.
    await petsing('credits', 'grant', '--user', 'fuzz@example.com', '--amount', '3');
    apiKey = (await petsing('api-keys', 'create', '--user', 'fuzz@example.com', '--scopes', 'videos:read,videos:write')).key;
    idToken = (await petsing('dev-token', '--email', 'fuzz-web@example.com')).id_token;
  }, 180_000);
  afterAll(async () => {
    await stopProcess(service);
    await stripe?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const schemathesis = (args: string[], junitPath: string) =>
    new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const options = ['--checks', CHECKS, '--seed', SEED, '--max-examples', EXAMPLES_PER_OPERATION, '--no-color', '--report', 'junit', '--report-junit-path', junitPath];
      const child = spawn('st', ['run', `${baseUrl}/openapi.json`, ...options, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let report = '';
      child.stdout.on('data', (chunk: Buffer) => (report += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (report += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output: report }));
    });

  // `operations`: some each pass must have exercised (read from the JUnit report), so a path the document loses fails here.
  it.each([
    {
      name: 'the public API with an API key',
      args: () => ['--header', `Authorization: Bearer ${apiKey}`, '--include-path-regex', '^/v1/'],
      operations: ['POST /v1/audio', 'GET /v1/voices', 'POST /v1/videos', 'POST /v1/images', 'POST /v1/webhooks', 'GET /v1/webhooks/{id}/deliveries', 'POST /v1/webhooks/{id}/test'],
    },
    { name: 'the MCP endpoint with an API key', args: () => ['--header', `Authorization: Bearer ${apiKey}`, '--include-path-regex', '^/mcp$'] },
    { name: 'the web-app endpoints with an ID token', args: () => ['--header', `Authorization: Bearer ${idToken}`, '--exclude-path-regex', '^/(v1/|mcp$|oauth/|\\.well-known/)'] },
    { name: 'OAuth, discovery and the service index without credentials', args: () => ['--include-path-regex', '^/(oauth/|\\.well-known/|$|health$|openapi\\.json$|versions$|templates)'] },
  ])('$name', async ({ args, operations = [] }) => {
    const junitPath = join(dataDir, `schemathesis-${crypto.randomUUID()}.xml`);
    const { code, output: report } = await schemathesis(args(), junitPath);
    expect(code, report).toBe(0);
    expect(report).not.toMatch(/No operations/i);
    const tested = [...(await readFile(junitPath, 'utf8')).matchAll(/<testcase [^>]*name="([^"]+)"/g)].map((match) => match[1]);
    expect(tested).toEqual(expect.arrayContaining(operations));
    expect(service?.exitCode, `the service stopped:\n${output}`).toBeNull();
  }, 600_000);
});
