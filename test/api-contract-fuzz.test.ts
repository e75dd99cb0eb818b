import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, signInWebUser } from './support/accounts.ts';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** What every response must satisfy: no 5xx, and status, content type and body as /openapi.json documents them. */
const CHECKS = 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance';
/** A fixed seed makes a failure reproducible with the same command; the examples per operation keep the run short on two cores. */
const SEED = '20261126';
const EXAMPLES_PER_OPERATION = '10';

/**
 * Schemathesis (PyPI; installed by infra/setup-host.sh with PETSING_TEST_TOOLS=1) generates requests from
 * /openapi.json, valid and invalid, and checks every answer against the same document. The service is the
 * real one with real workers, Temporal, Postgres and a local Stripe; each credential family gets its own pass.
 */
describe('the /openapi.json contract, fuzzed by schemathesis', () => {
  let service: TestService;
  let stripe: FakeStripe;
  let apiKey: string;
  let idToken: string;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      env: {
        RATE_LIMIT_READS_PER_MINUTE: '100000',
        RATE_LIMIT_WRITES_PER_MINUTE: '100000',
        RATE_LIMIT_WEB_MEDIA_PER_MINUTE: '100000',
        RENDER_OUTPUT_SIZE: '128',
        STRIPE_SECRET_KEY: 'sk_test_petsing_fuzz',
        STRIPE_WEBHOOK_SECRET: 'whsec_petsing_fuzz',
        STRIPE_API_BASE: stripe.apiBase,
      },
    });
    await service.context.services.templates.seed(service.context.logger);
    // A few credits: creates past them answer 402, so the render node is not buried in generated videos.
    apiKey = (await createTestAccount(service.context, 'fuzz@example.com', 3)).readWrite;
    idToken = (await signInWebUser(service, 'fuzz-web@example.com')).token;
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await stripe?.close();
  });

  const schemathesis = (args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn('st', ['run', `${service.baseUrl}/openapi.json`, '--checks', CHECKS, '--seed', SEED, '--max-examples', EXAMPLES_PER_OPERATION, '--no-color', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    });

  it.each([
    { name: 'the public API with an API key', args: () => ['--header', `Authorization: Bearer ${apiKey}`, '--include-path-regex', '^/v1/'] },
    { name: 'the MCP endpoint with an API key', args: () => ['--header', `Authorization: Bearer ${apiKey}`, '--include-path-regex', '^/mcp$'] },
    { name: 'the web-app endpoints with an ID token', args: () => ['--header', `Authorization: Bearer ${idToken}`, '--exclude-path-regex', '^/(v1/|mcp$|oauth/|\\.well-known/)'] },
    { name: 'OAuth, discovery and the service index without credentials', args: () => ['--include-path-regex', '^/(oauth/|\\.well-known/|$|health$|openapi\\.json$|versions$|templates)'] },
  ])('$name', async ({ args }) => {
    const { code, output } = await schemathesis(args());
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/No operations/i);
  }, 600_000);
});
