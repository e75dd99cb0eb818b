/**
 * `npm run bench:hostile [-- --rounds N]`: what a deeply nested request body costs the service, the way an attacker
 * sends it: `petsing start` in a fresh DATA_DIR (embedded defaults), then JSON bodies nested 1,000, 15,000 and
 * 100,000 deep (arrays and objects) to every endpoint that reads JSON, each answered 400, and GET /health timed
 * while six such bodies are in flight at once. The suite (control-plane/test/hostile-input.test.ts) checks the
 * answers; this measures them. See docs/benchmarks.md (## Hostile input).
 * Goal (issue 34): each answered within 50 ms, and /health under 100 ms meanwhile.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { embeddedServiceEnv, waitFor } from '../support/processes.ts';
import { ms, percentile, printTable } from './stats.ts';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '10' } } });
const ROUNDS = Number(options.rounds);
const DEPTHS = [1_000, 15_000, 100_000];
const IN_FLIGHT = 6;
const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'control-plane', 'bin', 'petsing.mjs');

const dataDir = await mkdtemp(join(tmpdir(), 'petsing-hostile-bench-'));
const { env, port } = await embeddedServiceEnv(dataDir, {
  // Every request below is an attacker's; the limits would count them out long before the measurement ends.
  RATE_LIMIT_WRITES_PER_MINUTE: '100000', RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_SIGN_INS_PER_MINUTE: '100000',
});
const baseUrl = `http://127.0.0.1:${port}`;
const service = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
const nested = (shape: 'array' | 'object', depth: number) => (shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
try {
  await waitFor('GET /health', async () => (await fetch(`${baseUrl}/health`).catch(() => undefined))?.ok === true, 180_000);
  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [cli, '--json', ...args], { env })).stdout);
  await petsing('users', 'create', '--email', 'bench@example.com');
  const { key } = await petsing('api-keys', 'create', '--user', 'bench@example.com', '--scopes', 'videos:read,videos:write');
  const targets = [
    { path: '/oauth/token', auth: undefined },
    { path: '/oauth/register', auth: undefined },
    { path: '/v1/videos', auth: key as string },
    { path: '/mcp', auth: key as string },
  ];
  const post = async (path: string, auth: string | undefined, body: string) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) }, body });
    await response.arrayBuffer();
    // MCP answers a JSON-RPC error with 200 or 400 by transport; every other endpoint must say 400.
    if (response.status !== 400 && !(path === '/mcp' && response.status === 200)) throw new Error(`${path}: ${response.status}`);
    return performance.now() - started;
  };

  // The first request of each endpoint compiles its paths; what is measured is the steady cost.
  for (const target of targets) await post(target.path, target.auth, nested('array', 40));
  const rows: string[][] = [];
  for (const depth of DEPTHS) {
    for (const target of targets) {
      const times: number[] = [];
      for (let round = 0; round < ROUNDS; round++) for (const shape of ['array', 'object'] as const) times.push(await post(target.path, target.auth, nested(shape, depth)));
      rows.push([String(depth), target.path, String(times.length), ms(percentile(times, 50)), ms(percentile(times, 90)), ms(Math.max(...times))]);
    }
  }
  const bodies = [nested('array', 15_000), nested('object', 6_000), nested('array', 100_000), nested('object', 100_000)];
  const health: number[] = [];
  for (let round = 0; round < ROUNDS * 2; round++) {
    const inFlight = Array.from({ length: IN_FLIGHT }, (_, index) => post(index % 2 === 0 ? '/oauth/token' : '/v1/videos', index % 2 === 0 ? undefined : key, bodies[(round + index) % bodies.length]!));
    const started = performance.now();
    const answer = await fetch(`${baseUrl}/health`);
    await answer.arrayBuffer();
    health.push(performance.now() - started);
    await Promise.all(inFlight);
  }

  console.log(`Nested JSON bodies on embedded defaults (petsing start), ${ROUNDS} rounds of arrays and objects each`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}\n`);
  printTable(['depth', 'endpoint', 'requests', 'median ms', 'p90 ms', 'max ms'], rows);
  console.log(`\nGET /health with ${IN_FLIGHT} such bodies in flight, ${health.length} times: median ${ms(percentile(health, 50))} ms, p90 ${ms(percentile(health, 90))} ms, max ${ms(Math.max(...health))} ms`);
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}
