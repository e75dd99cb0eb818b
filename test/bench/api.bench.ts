/**
 * `npm run bench:api [-- options]`: the poll endpoint (GET /v1/videos/{id}) of the real service against a
 * bare Express handler answering the same JSON, side by side in one run, with autocannon. The service runs
 * with its rate limits in Redis (REDIS_URL) and, for comparison, in Postgres; GET /health of the service is
 * measured too. Real Postgres (a fresh database), real Redis. See docs/benchmarks.md (## API poll endpoint).
 *
 * Options: --duration S (10) per measured run; --connections N (10); --rounds N (2), each measuring every
 * target once, in turn; --redis URL (REDIS_URL, else redis://127.0.0.1:6379).
 * Goal (issue 16): the service's poll at >= 50% of the bare handler's requests/s, with p99 < 20 ms.
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { printTable, sampleCpu } from './stats.ts';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
  },
});
const DURATION = Number(options.duration);
const CONNECTIONS = Number(options.connections);
const ROUNDS = Number(options.rounds);
const WARMUP_SECONDS = 2;
const GOAL_RATIO = 0.5;
const GOAL_P99_MS = 20;

type Targets = { service: string; servicePostgres: string; bare: string; runs: { key: string; videoId: string }[] };
type Target = { name: string; url: (run: Targets['runs'][number]) => string; authorized: boolean };

const server = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, 'api-bench-server.ts'), options.redis, String(ROUNDS * 2 + 2)], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const targets = await new Promise<Targets>((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`the bench server exited with ${code}`)));
  createInterface({ input: server.stdout! }).once('line', (line) => resolve(JSON.parse(line) as Targets));
});

const measured: Target[] = [
  { name: 'bare Express, same JSON', url: (run) => `${targets.bare}/v1/videos/${run.videoId}`, authorized: false },
  { name: 'service GET /v1/videos/{id} (Redis limiter)', url: (run) => `${targets.service}/v1/videos/${run.videoId}`, authorized: true },
  { name: 'service GET /v1/videos/{id} (Postgres limiter)', url: (run) => `${targets.servicePostgres}/v1/videos/${run.videoId}`, authorized: true },
  { name: 'service GET /health', url: () => `${targets.service}/health`, authorized: false },
];

/**
 * Besides requests/s and p99, the CPU the server process spent per request: on a shared machine the rates
 * follow the other tenants' load, while the work done per request does not (much).
 */
async function load(target: Target, run: Targets['runs'][number], duration: number) {
  const cpuBefore = sampleCpu(server.pid).server;
  const result = await autocannon({
    url: target.url(run),
    connections: CONNECTIONS,
    duration,
    headers: target.authorized ? { Authorization: `Bearer ${run.key}` } : {},
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} answers other than 2xx, ${result.errors} errors`);
  const cpuMicroseconds = ((sampleCpu(server.pid).server - cpuBefore) / result.requests.total) * 1e6;
  return { requestsPerSecond: result.requests.average, p99: result.latency.p99, cpuMicroseconds };
}

const results = new Map<string, { requestsPerSecond: number; p99: number; cpuMicroseconds: number }[]>();
let next = 0;
try {
  console.log(`${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);
  console.log(`autocannon, ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} rounds; load average before: ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  for (const target of measured) {
    await load(target, targets.runs[next]!, WARMUP_SECONDS);
    if (target.authorized) next++;
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of measured) {
      const figures = await load(target, targets.runs[next]!, DURATION);
      if (target.authorized) next++;
      results.set(target.name, [...(results.get(target.name) ?? []), figures]);
      console.log(`round ${round + 1}: ${target.name}: ${Math.round(figures.requestsPerSecond)} req/s, p99 ${figures.p99} ms, server CPU ${Math.round(figures.cpuMicroseconds)} µs/request`);
    }
  }
} finally {
  server.stdin!.end();
}

const bare = mean(results.get(measured[0]!.name)!.map((figures) => figures.requestsPerSecond));
printTable(
  ['target', 'req/s (mean of rounds)', 'p99 ms (worst round)', 'ratio to bare', 'server CPU µs/request (mean)'],
  measured.map((target) => {
    const runs = results.get(target.name)!;
    const rate = mean(runs.map((figures) => figures.requestsPerSecond));
    return [target.name, Math.round(rate), Math.max(...runs.map((figures) => figures.p99)), (rate / bare).toFixed(2), Math.round(mean(runs.map((figures) => figures.cpuMicroseconds)))];
  }),
);
const poll = results.get(measured[1]!.name)!;
const ratio = mean(poll.map((figures) => figures.requestsPerSecond)) / bare;
const p99 = Math.max(...poll.map((figures) => figures.p99));
console.log(`load average after: ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
console.log(`goal (>= ${GOAL_RATIO * 100}% of bare Express, p99 < ${GOAL_P99_MS} ms): ${ratio >= GOAL_RATIO && p99 < GOAL_P99_MS ? 'met' : 'not met'} (${(ratio * 100).toFixed(0)}%, p99 ${p99} ms)`);

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
