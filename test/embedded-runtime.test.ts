import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitFor, waitForHealth } from './support/processes.ts';
import { json } from './support/http.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'control-plane', 'bin', 'petsing.mjs');

/**
 * The one-command start on embedded defaults (PGlite, local object store, Temporal dev server), driven
 * the way an operator would: `petsing start`, the CLI against the running service, a restart.
 */
describe('petsing start on embedded defaults', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let service: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    output = '';
    service = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    service.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    service.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitForHealth(service, baseUrl, () => output, 120_000);
    // The API answers before the workers are up; the banner says when every part runs.
    await waitFor('the start banner', async () => output.includes('petsing is running'), 120_000);
  };
  const stop = async () => {
    const child = service!;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  };
  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [cli, '--json', ...args], { env })).stdout);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-embedded-'));
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_DEV_UI_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
  }, 10_000);

  afterAll(async () => {
    if (service && service.exitCode === null) await stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Paths under DATA_DIR that other local users could read or write (group or other permission bits). */
  const shared = async (path = dataDir): Promise<string[]> => {
    // Journals come and go while the service runs.
    const stats = await lstat(path).catch(() => undefined);
    if (!stats || stats.isSymbolicLink()) return [];
    const found = stats.mode & 0o077 ? [`${path.slice(dataDir.length) || '/'} ${(stats.mode & 0o777).toString(8)}`] : [];
    if (!stats.isDirectory()) return found;
    for (const entry of await readdir(path).catch(() => [])) found.push(...(await shared(join(path, entry))));
    return found;
  };

  it('serves /health, the templates and the CLI, and keeps everything across a restart', async () => {
    // What an older, looser version left: a readable DATA_DIR and a world-writable file.
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, 'left-by-an-older-version.txt'), 'x');
    await chmod(join(dataDir, 'left-by-an-older-version.txt'), 0o666);
    await start();
    // DATA_DIR is private to its user: PGlite's files, the Temporal dev server's database, the object store, that file.
    expect(await shared()).toEqual([]);
    expect((await readdir(dataDir)).length).toBeGreaterThan(2);
    expect(await (await fetch(`${baseUrl}/health`)).text()).toBe('OK');
    // The banner is a JSON line too (LOG_LEVEL=warn notwithstanding), its addresses fields.
    expect(output).toContain(`"api":"${baseUrl}","webSocket":"ws://localhost:`);
    expect(output).toMatch(/"temporalUi":"http:\/\/localhost:\d+"/);

    const templates = await json(fetch(`${baseUrl}/templates`));
    expect(templates.length).toBeGreaterThanOrEqual(5);

    const user = await petsing('users', 'create', '--email', 'embedded@example.com');
    const { key } = await petsing('api-keys', 'create', '--user', 'embedded@example.com', '--scopes', 'videos:read,videos:write');
    const granted = await petsing('credits', 'grant', '--user', user.id, '--amount', '9');
    expect(granted.balance).toBe(9);

    const me = async () => json(fetch(`${baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${key}` } }));
    expect(await me()).toEqual({ user_id: user.id, credit_balance: 9, credits_per_video: 1, scopes: ['videos:read', 'videos:write'] });

    expect(await stop()).toBe(0);
    await start();
    expect(await me()).toMatchObject({ user_id: user.id, credit_balance: 9 });
    expect((await json(fetch(`${baseUrl}/templates`))).length).toBe(templates.length);
    expect(await stop()).toBe(0);

    // With the service stopped, the CLI opens the embedded database itself.
    const offline = await petsing('credits', 'grant', '--user', 'embedded@example.com', '--amount', '1');
    expect(offline.balance).toBe(10);
  }, 360_000);
});
