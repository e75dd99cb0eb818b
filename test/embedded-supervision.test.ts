import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliUser, supervisedChildPid } from './support/embedded-service.ts';
import { logLineProblems } from './support/log-capture.ts';
import { freePort, isAlive, portsFree, runPetsing, serviceProcessEnv, stopProcess, waitFor } from './support/processes.ts';

const renderWorkerOf = (parent: number) => supervisedChildPid(parent, 'worker', 'render');
const apiProcessOf = (parent: number) => supervisedChildPid(parent, 'serve');

/**
 * `petsing start` on its embedded defaults (PGlite, local store) supervising its parts as processes of their own
 * (`petsing serve`: the API and the control worker, which share the embedded database; `petsing worker render`) and
 * its own Temporal dev server: none outlives petsing (not even a SIGKILL of it); a render worker that dies comes
 * back while the API answers, an API process that dies comes back while the render worker and Temporal go on; a
 * dev server a crashed run of the same DATA_DIR left holding the ports is recognised by its recorded pid and
 * stopped, while a port taken by anything else is refused.
 */
describe('petsing start and the processes it supervises', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let devPort: number;
  let uiPort: number;
  const running: ChildProcess[] = [];

  /** `petsing start`, its processes kept for the end of the test; `detached` as a terminal runs it. */
  const start = (detached = false) => {
    const started = runPetsing(['start'], env, { detached });
    running.push(started.child);
    return { ...started, healthy: () => started.serving(`http://127.0.0.1:${port}`, 150_000) };
  };
  /** A user with five credits and a read-write key, made with the CLI against the running service, and its /v1. */
  const apiUser = async (email: string) => ({ api: await cliUser(env, `http://127.0.0.1:${port}`, email) });
  /** A real pet photo checked through /v1; answers its image id. */
  const checkedPhoto = async (api: (path: string, init?: RequestInit) => Promise<Response>) => {
    const photo = new FormData();
    photo.append('image', new Blob([await readFile(join(import.meta.dirname, '..', '..', 'shared', 'pets', 'cat-01.jpg'))], { type: 'image/jpeg' }), 'cat.jpg');
    return ((await (await api('/v1/images', { method: 'POST', body: photo })).json()) as { id: string }).id;
  };
  /** A template video of a real pet photo through /v1; answers its id. */
  const createVideo = async (api: (path: string, init?: RequestInit) => Promise<Response>) => {
    const created = await api('/v1/videos', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ template_id: '1', image_id: await checkedPhoto(api) }) });
    expect(created.status).toBe(202);
    return ((await created.json()) as { id: string }).id;
  };
  const recordedPid = async () => Number((await readFile(join(dataDir, 'temporal-dev-server.pid'), 'utf8')).trim());

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-embedded-'));
    port = await freePort();
    devPort = await freePort();
    uiPort = await freePort();
    env = serviceProcessEnv({
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(devPort),
      TEMPORAL_DEV_UI_PORT: String(uiPort),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      // Renders long enough (seconds) to be interrupted in the middle: each kill lands within a poll (250 ms) of the
      // render starting.
      RENDER_OUTPUT_SIZE: '720',
      RENDER_FPS: '25',
    });
  });
  // Whatever a test started is stopped after it, passed or not, so the next one finds the ports free.
  afterEach(async () => {
    for (const child of running.splice(0)) await stopProcess(child);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stops its dev server when it is killed with SIGKILL, so the next start finds the ports free', async () => {
    const first = start();
    await first.healthy();
    const server = await recordedPid();
    expect(isAlive(server)).toBe(true);
    const renderWorker = await renderWorkerOf(first.child.pid!);
    const apiProcess = await apiProcessOf(first.child.pid!);
    expect(renderWorker).toBeDefined();
    expect(apiProcess).toBeDefined();

    first.child.kill('SIGKILL');
    await first.exited;
    await waitFor('the dev server to stop after petsing died', async () => !isAlive(server), 20_000);
    await waitFor('the render worker to stop after petsing died', async () => !isAlive(renderWorker!), 40_000);
    await waitFor('the API process to stop after petsing died', async () => !isAlive(apiProcess!), 40_000);
    expect(await portsFree([port, devPort, uiPort])).toBe(true);

    // A clean stop (SIGTERM) stops the dev server last and forgets its pid.
    const second = start();
    await second.healthy();
    const next = await recordedPid();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(isAlive(next)).toBe(false);
    await expect(readFile(join(dataDir, 'temporal-dev-server.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 360_000);

  it('starts a render worker killed mid-render again while /v1 goes on answering; the render completes, charged once', async () => {
    const service = start();
    await service.healthy();
    const { api } = await apiUser('killed-worker@example.com');
    const video = await createVideo(api);
    await waitFor('the render to run', async () => ((await (await api(`/v1/videos/${video}`)).json()) as { stage: string | null }).stage === 'rendering', 60_000);
    const killed = (await renderWorkerOf(service.child.pid!))!;
    process.kill(killed, 'SIGKILL');

    // While the worker is down and until the video is done, the API answers every read.
    const answers: number[] = [];
    let status = '';
    await waitFor('the video to complete on the restarted worker', async () => {
      const read = await fetch(`http://127.0.0.1:${port}/health`).then((health) => health.status, () => 0);
      const polled = await api(`/v1/videos/${video}`).catch(() => undefined);
      answers.push(read, polled?.status ?? 0);
      status = polled?.ok ? ((await polled.json()) as { status: string }).status : status;
      return status === 'completed' || status === 'failed';
    }, 150_000);
    expect(status).toBe('completed');
    expect(answers.length).toBeGreaterThan(4);
    expect(answers.filter((answer) => answer !== 200)).toEqual([]);
    const restarted = await renderWorkerOf(service.child.pid!);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(killed);
    expect(service.output()).toContain('exited unasked; starting it again');
    // Charged once: five granted, one spent, nothing refunded.
    expect(((await (await api('/v1/me')).json()) as { credit_balance: number }).credit_balance).toBe(4);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(logLineProblems(service.output())).toEqual([]);
  }, 300_000);

  it('starts its API process again when it dies, while the render worker and Temporal go on; a second start of the same DATA_DIR is refused', async () => {
    const service = start();
    await service.healthy();
    const { api } = await apiUser('killed-api@example.com');
    const renderWorker = await renderWorkerOf(service.child.pid!);
    const server = await recordedPid();
    const killed = (await apiProcessOf(service.child.pid!))!;
    process.kill(killed, 'SIGKILL');
    await waitFor('the API process to die', async () => !isAlive(killed), 10_000);

    await service.healthy();
    const restarted = await apiProcessOf(service.child.pid!);
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(killed);
    expect(service.output()).toMatch(/"part":"API and control worker".*"msg":"exited unasked; starting it again"/);
    expect(await renderWorkerOf(service.child.pid!)).toBe(renderWorker);
    expect(await recordedPid()).toBe(server);
    // Nothing was lost: the user, their key and their credits are in the database the new process opened.
    expect(((await (await api('/v1/me')).json()) as { credit_balance: number }).credit_balance).toBe(5);

    const second = start();
    expect(await second.exited).toBe(78);
    expect(second.output()).toContain(`DATA_DIR: petsing is already running on ${dataDir} (pid ${service.child.pid})`);
    expect(isAlive(restarted!)).toBe(true);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(logLineProblems(service.output())).toEqual([]);
  }, 300_000);

  it('starts its Temporal dev server again when it dies mid-render, on the same database: the render completes, charged once; a create while Temporal hangs is refused uncharged', async () => {
    const service = start();
    await service.healthy();
    const { api } = await apiUser('killed-temporal@example.com');
    const balance = async () => ((await (await api('/v1/me')).json()) as { credit_balance: number }).credit_balance;
    const ledger = async () => ((await (await api('/v1/credits')).json()) as { recent: { delta: number; reason: string }[] }).recent;

    // A dev server that hangs (stopped, not dead): a create cannot be queued, so it is refused before any charge.
    const image = await checkedPhoto(api);
    const server = await recordedPid();
    process.kill(server, 'SIGSTOP');
    try {
      const refused = await api('/v1/videos', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ template_id: '1', image_id: image }) });
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect([refused.status, body.error.code]).toEqual([503, 'service_unavailable']);
      expect(body.error.message).toContain('nothing was charged');
    } finally {
      process.kill(server, 'SIGCONT');
    }
    expect(await balance()).toBe(5);
    expect(await ledger()).toHaveLength(1);

    const video = await createVideo(api);
    await waitFor('the render to run', async () => ((await (await api(`/v1/videos/${video}`)).json()) as { stage: string | null }).stage === 'rendering', 60_000);
    process.kill(server, 'SIGKILL');

    // Until the video is done, /health answers every time; the dev server comes back on the same database.
    const answers: number[] = [];
    let status = '';
    await waitFor('the video to complete after Temporal came back', async () => {
      answers.push(await fetch(`http://127.0.0.1:${port}/health`).then((health) => health.status, () => 0));
      const polled = await api(`/v1/videos/${video}`).catch(() => undefined);
      status = polled?.ok ? ((await polled.json()) as { status: string }).status : status;
      return status === 'completed' || status === 'failed';
    }, 150_000);
    expect(status).toBe('completed');
    expect(answers.filter((answer) => answer !== 200)).toEqual([]);
    const restarted = await recordedPid();
    expect(restarted).not.toBe(server);
    expect(isAlive(restarted)).toBe(true);
    expect(service.output()).toMatch(/"part":"Temporal dev server".*"signal":"SIGKILL".*"msg":"exited unasked; starting it again"/);
    expect(service.output()).toMatch(/"part":"Temporal dev server".*"msg":"serving again"/);
    // Charged once: five granted, one spent, nothing refunded; the refused create left no entry.
    expect(await balance()).toBe(4);
    expect((await ledger()).map((entry) => entry.delta).sort()).toEqual([-1, 5]);
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(logLineProblems(service.output())).toEqual([]);
  }, 300_000);

  it('stops cleanly on a Ctrl-C to its whole process group mid-render: the workers let go before Temporal stops, no connection errors', async () => {
    const service = start(true);
    await service.healthy();
    const { api } = await apiUser('ctrl-c@example.com');
    const video = await createVideo(api);
    await waitFor('the render to run', async () => ((await (await api(`/v1/videos/${video}`)).json()) as { stage: string | null }).stage === 'rendering', 60_000);

    // What a terminal's Ctrl-C does: SIGINT to every process of the foreground group.
    process.kill(-service.child.pid!, 'SIGINT');
    expect(await service.exited).toBe(0);
    expect(service.output()).not.toMatch(/tcp connect|Connection refused|transport error|respond_activity_task_failed/i);
    expect(logLineProblems(service.output())).toEqual([]);
  }, 240_000);

  it('stops a dev server of this DATA_DIR left by a crashed run, and refuses a port taken by anything else', async () => {
    // What a crash that also took the watchdog leaves: this DATA_DIR's dev server on the ports, its pid recorded.
    const leftover = spawn(
      process.env.TEMPORAL_CLI_PATH ?? 'temporal',
      ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(devPort), '--ui-port', String(uiPort), '--db-filename', join(dataDir, 'temporal.db'), '--log-level', 'error'],
      { detached: true, stdio: 'ignore' },
    );
    running.push(leftover);
    await writeFile(join(dataDir, 'temporal-dev-server.pid'), `${leftover.pid}\n`);
    await waitFor('the leftover dev server to listen', async () => !(await portsFree([devPort])), 60_000);

    const restarted = start();
    await restarted.healthy();
    expect(isAlive(leftover.pid!), 'the leftover was stopped').toBe(false);
    expect(restarted.output()).toContain('stopping the Temporal dev server a previous run of this DATA_DIR left running');
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);

    // Anything else on the port is not ours to stop: the start is refused, saying which setting to change.
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(devPort, '127.0.0.1', resolve));
    try {
      const refused = start();
      expect(await refused.exited).toBe(78);
      expect(refused.output()).toContain(`TEMPORAL_DEV_PORT: port ${devPort} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 360_000);
});
