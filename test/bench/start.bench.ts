/**
 * `npm run bench:start [-- options]`: the first five minutes of a new user, timed. `petsing start` on its embedded
 * defaults (PGlite, local object store, its own Temporal dev server) in a fresh DATA_DIR until GET /health answers
 * (the first start: the database's creation, migrations, keys), stopped, started again on the same DATA_DIR (a warm
 * restart), then, once that start has settled, the operator CLI's simple commands against the running service
 * (`users create`, `credits grant`), each run as a new process the way a person types them, and the time GET /health
 * is gone when the API process is killed (SIGKILL) and its supervisor starts it again. See docs/benchmarks.md (## Start).
 *
 * Options: --root DIR (this checkout) the checkout whose `petsing` is timed, so an earlier commit's checkout can be
 * measured side by side; --cli-runs N (5) runs of each CLI command; --busy N (0) processes that keep a core busy
 * each while the starts are timed (a machine under load); --install also times `npm ci` of the checkout's
 * committed tree in a fresh folder, with an empty npm cache (everything downloaded) and then with the one it filled.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { embeddedServiceEnv, isAlive, stopProcess } from '../support/processes.ts';
import { percentile, printTable } from './stats.ts';

const run = promisify(execFile);
const { values: options } = parseArgs({
  options: { root: { type: 'string' }, 'cli-runs': { type: 'string', default: '5' }, busy: { type: 'string', default: '0' }, install: { type: 'boolean', default: false } },
});
const root = resolve(options.root ?? join(import.meta.dirname, '..', '..'));
const cli = join(root, 'control-plane', 'bin', 'petsing.mjs');
const cliRuns = Number(options['cli-runs']);
const busy = Number(options.busy);
/** How long a stop may take: the supervisor lets its workers hand back their tasks (a SIGKILL would leave parts stopping). */
const STOP_GRACE_MS = 60_000;
/** How many times the API process is killed and timed coming back. */
const API_RESTARTS = 3;
/**
 * How long the API process runs between kills: one that dies within a minute of its start is started again after a
 * longer delay each time (the supervisor's backoff), which is not what is timed here.
 */
const API_STEADY_MS = 61_000;
/** How long a start is given to finish what it does after /health answers. */
const SETTLE_MS = 20_000;

const dataDir = await mkdtemp(join(tmpdir(), 'petsing-start-bench-'));
const { env, port } = await embeddedServiceEnv(dataDir);

/** Starts `petsing start` and answers the seconds until GET /health answered, and the process. */
async function startUntilHealthy(): Promise<{ seconds: number; child: ChildProcess }> {
  const started = performance.now();
  const child = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`petsing start exited ${child.exitCode}`);
    if ((await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok) return { seconds: (performance.now() - started) / 1000, child };
    if (performance.now() - started > 300_000) throw new Error('no /health within 300 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function timeCli(args: string[]): Promise<number[]> {
  const seconds: number[] = [];
  for (let i = 0; i < cliRuns; i++) {
    const started = performance.now();
    await run(process.execPath, [cli, '--json', ...args.map((arg) => arg.replace('{i}', String(i)))], { env });
    seconds.push((performance.now() - started) / 1000);
  }
  return seconds;
}

/** `npm ci` of the checkout's committed tree in a fresh folder: seconds with an empty cache, then with the one it filled. */
async function timeInstall(): Promise<{ cold: number; warm: number }> {
  const folder = await mkdtemp(join(tmpdir(), 'petsing-install-bench-'));
  const cache = join(folder, 'npm-cache');
  const timed = async () => {
    const tree = join(folder, 'tree');
    await rm(tree, { recursive: true, force: true });
    await mkdir(tree);
    await run('sh', ['-c', `git -C '${root}' archive HEAD | tar -x -C '${tree}'`]);
    const started = performance.now();
    await run('npm', ['ci', '--cache', cache, '--no-audit', '--no-fund'], { cwd: tree, maxBuffer: 64 * 1024 * 1024 });
    return (performance.now() - started) / 1000;
  };
  try {
    const cold = await timed();
    return { cold, warm: await timed() };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** How long GET /health is gone when the supervised API process dies (SIGKILL) and is started again, a few times. */
async function timeApiRestarts(): Promise<number[]> {
  const seconds: number[] = [];
  for (let i = 0; i < API_RESTARTS; i++) {
    const pid = Number((await readFile(join(dataDir, 'serve.pid'), 'utf8')).trim());
    const killed = performance.now();
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
    while (!(await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok) await new Promise((resolve) => setTimeout(resolve, 50));
    seconds.push((performance.now() - killed) / 1000);
    if (i < API_RESTARTS - 1) await new Promise((resolve) => setTimeout(resolve, API_STEADY_MS));
  }
  return seconds;
}

const burners = Array.from({ length: busy }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
try {
  const install = options.install ? await timeInstall() : undefined;
  const first = await startUntilHealthy();
  // A start goes on in the background once /health answers (the control and render workers, the template previews):
  // the restart, and the CLI, are timed on a settled service.
  const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  await settle();
  await stopProcess(first.child, STOP_GRACE_MS);
  const warm = await startUntilHealthy();
  await settle();
  const create = await timeCli(['users', 'create', '--email', 'bench-{i}@example.com']);
  const grant = await timeCli(['credits', 'grant', '--user', 'bench-0@example.com', '--amount', '5']);
  const apiRestarts = await timeApiRestarts();
  await stopProcess(warm.child, STOP_GRACE_MS);
  const s = (values: number[], p: number) => percentile(values, p).toFixed(2);
  console.log(`checkout: ${root}${busy > 0 ? `, ${busy} busy-looping processes beside it` : ''}`);
  printTable(['what', 'seconds'], [
    ...(install ? [['`npm ci`, empty npm cache', install.cold.toFixed(1)], ['`npm ci`, warm npm cache', install.warm.toFixed(1)]] : []),
    ['first start (fresh DATA_DIR) → GET /health', first.seconds.toFixed(1)],
    ['warm restart → GET /health', warm.seconds.toFixed(1)],
    [`\`petsing users create\` p50 / max of ${cliRuns}`, `${s(create, 50)} / ${s(create, 100)}`],
    [`\`petsing credits grant\` p50 / max of ${cliRuns}`, `${s(grant, 50)} / ${s(grant, 100)}`],
    [`API process SIGKILLed → GET /health again, p50 / max of ${apiRestarts.length}`, `${s(apiRestarts, 50)} / ${s(apiRestarts, 100)}`],
  ]);
} finally {
  for (const burner of burners) burner.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
}
