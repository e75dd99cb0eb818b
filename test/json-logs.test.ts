import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_PREVIEW_OUTPUT } from '@petsing/workflows';
import { cliUser, createPetVideo, supervisedChildPid, videoState } from './support/embedded-service.ts';
import { logLineProblems } from './support/log-capture.ts';
import { freePort, runPetsing, serviceProcessEnv, stopProcess, waitUntil } from './support/processes.ts';

/**
 * What the service leaves in its temp folder besides nothing: tsx's cache of compiled sources (`tsx-<uid>`), kept
 * between starts by design. Anything else there after a start, a render or a killed render is a leftover.
 */
const leftovers = async (folder: string) => (await readdir(folder)).filter((name) => !/^tsx-\d+$/.test(name)).sort();

/** How many lines of the output carry this message. */
const linesSaying = (output: string, message: string) => output.split('\n').filter((line) => line.includes(`"msg":"${message}`)).length;

/**
 * Every process of the service logs JSON lines only, one per event, on its standard output and error: the
 * supervisor, the API and control worker, the render worker, the Temporal SDK's core (forwarded to our logger,
 * with a server that cannot be reached said once rather than at every retry), webpack's report on a first start
 * (one line), and the start banner itself. And nothing of the service stays in its temp folder: onnxruntime's
 * telemetry files are off, a render removes its scratch folder, and a render worker started again removes the
 * folder of the render its killed predecessor left (partial MP4 included) at once.
 */
describe('the logs and the temp folder of a running service', () => {
  let root: string;
  const running: ChildProcess[] = [];
  /** A fresh folder for each part of a test: DATA_DIR, TMPDIR. */
  const folder = async (name: string) => {
    const path = join(root, name);
    await mkdir(path);
    return path;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'petsing-json-logs-'));
  });
  afterEach(async () => {
    for (const child of running.splice(0)) await stopProcess(child, 30_000);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('petsing start: JSON lines only through a first start, a render, a render worker killed mid-render and its restart, and Ctrl-C; nothing left in TMPDIR', async () => {
    const port = await freePort();
    const temp = await folder('start-tmp');
    const env = serviceProcessEnv({
      DATA_DIR: await folder('start-data'),
      TMPDIR: temp,
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(await freePort()),
      TEMPORAL_DEV_UI_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      // A first start as an operator's: its template previews render too.
      TEMPLATE_PREVIEWS: 'true',
      // Renders long enough (seconds) to be killed in the middle, larger and faster than a template preview's.
      RENDER_OUTPUT_SIZE: '720',
      RENDER_FPS: '30',
    });
    // A first start bundles the workflow code itself (webpack's report is one line), not the run's bundle.
    delete env.WORKFLOW_BUNDLE_PATH;
    const baseUrl = `http://127.0.0.1:${port}`;
    // In a process group of its own, as a terminal runs it, so that it can be sent a Ctrl-C.
    const service = runPetsing(['start'], env, { detached: true });
    running.push(service.child);
    await service.serving(baseUrl, 180_000);
    const api = await cliUser(env, baseUrl, 'json-logs@example.com');

    const first = await createPetVideo(api);
    await waitUntil('the first video to complete', async () => {
      const { status } = await videoState(api, first);
      if (status === 'failed') throw new Error(`the first video failed:\n${service.output().slice(-8_000)}`);
      return status === 'completed';
    }, 240_000);
    // The template previews of a first start render meanwhile: each removes its folder before its preview is recorded.
    await waitUntil('the template previews to be made', async () => {
      const templates = (await (await api('/v1/templates')).json()) as { data: { preview_video_url: string | null }[] };
      return templates.data.every((template) => template.preview_video_url !== null);
    }, 240_000);
    // A node set to 720 px at 30 fps makes the picker's example clips at most TEMPLATE_PREVIEW_OUTPUT (540 px, 25 fps;
    // the sample pet's 512 px photo is not enlarged).
    const [example] = ((await (await api('/v1/templates')).json()) as { data: { preview_video_url: string }[] }).data;
    const clip = join(root, 'preview.mp4');
    await writeFile(clip, Buffer.from(await (await fetch(example!.preview_video_url)).arrayBuffer()));
    const { stdout } = await promisify(execFile)('ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=width,r_frame_rate', '-of', 'csv=p=0', clip]);
    const [width, rate] = stdout.trim().split(',');
    expect(Number(width)).toBeLessThanOrEqual(TEMPLATE_PREVIEW_OUTPUT.width);
    expect(rate).toBe(`${TEMPLATE_PREVIEW_OUTPUT.fps}/1`);
    // Soft: a run on code without the fixes says every one of them that fails.
    expect.soft(logLineProblems(service.output()), 'through a first start and a render').toEqual([]);
    expect.soft(await leftovers(temp), 'after a start and a render').toEqual([]);

    const second = await createPetVideo(api);
    await waitUntil('the second render to be under way', async () => (await videoState(api, second)).progress >= 10, 120_000);
    const killed = (await supervisedChildPid(service.child.pid!, 'worker', 'render'))!;
    expect((await leftovers(temp)).some((name) => name.startsWith('petsing-render-'))).toBe(true);
    process.kill(killed, 'SIGKILL');
    // The restarted worker hands back the render its predecessor was killed in (its scratch folder's record), so
    // Temporal retries it at once rather than after the render's 30 s heartbeat timeout.
    await waitUntil('the second video to complete on the restarted render worker', async () => {
      const { status } = await videoState(api, second);
      if (status === 'failed') throw new Error(`the second video failed:\n${service.output().slice(-8_000)}`);
      return status === 'completed';
    }, 240_000);
    expect.soft(service.output()).toContain('removed scratch folders of renders that no longer run');
    expect.soft(service.output()).toMatch(new RegExp(`"videoId":"${second}".*"msg":"handed back a render the node before this one stopped in"`));
    expect.soft(await leftovers(temp), 'after a killed render and its retry on the restarted worker').toEqual([]);

    // What a terminal's Ctrl-C does: SIGINT to the foreground group.
    process.kill(-service.child.pid!, 'SIGINT');
    expect(await service.exited).toBe(0);
    expect.soft(logLineProblems(service.output()), 'through a render worker killed and started again, and Ctrl-C').toEqual([]);
    expect.soft(service.output()).not.toContain('No workflows registered');
    expect(linesSaying(service.output(), 'petsing is running')).toBe(1);
    expect(await leftovers(temp), 'after Ctrl-C').toEqual([]);
  }, 720_000);

  it('petsing worker render: its Temporal server gone and back is two JSON lines, not a line at every retry; nothing left in TMPDIR', async () => {
    const temporalPort = await freePort();
    const data = await folder('worker-data');
    const temp = await folder('worker-tmp');
    const devServer = () => {
      const server = spawn(
        process.env.TEMPORAL_CLI_PATH ?? 'temporal',
        ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(temporalPort), '--db-filename', join(data, 'temporal.db'), '--log-level', 'error'],
        { stdio: 'ignore' },
      );
      running.push(server);
      return server;
    };
    let server = devServer();
    const worker = runPetsing(['worker', 'render'], serviceProcessEnv({ DATA_DIR: data, TMPDIR: temp, TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`, LOG_LEVEL: 'info' }));
    running.push(worker.child);
    const exitedEarly = () => {
      if (worker.child.exitCode !== null) throw new Error(`petsing worker render exited (${worker.child.exitCode}):\n${worker.output().slice(-8_000)}`);
    };
    await waitUntil('the render worker to serve', () => (exitedEarly(), worker.output().includes('petsing render node is serving')), 120_000);

    server.kill('SIGKILL');
    await waitUntil('the render worker to find Temporal gone', () => (exitedEarly(), /Temporal is unreachable|temporalio_client::retry/.test(worker.output())), 60_000);
    // The outage lasts this long: its two workers polling and heartbeating, the SDK retries several times in it.
    const outageMs = 8_000;
    await new Promise((resolve) => setTimeout(resolve, outageMs));
    expect.soft(logLineProblems(worker.output()), 'while Temporal is down').toEqual([]);
    expect.soft(await leftovers(temp), 'after a start').toEqual([]);

    server = devServer();
    await waitUntil('the render worker to find Temporal back', () => (exitedEarly(), worker.output().includes('"msg":"Temporal answers again"')), 90_000);
    const output = worker.output();
    expect(linesSaying(output, 'Temporal is unreachable')).toBe(1);
    expect(linesSaying(output, 'Temporal answers again')).toBe(1);
    const back = JSON.parse(output.split('\n').find((line) => line.includes('"msg":"Temporal answers again"'))!) as { retriesNotLogged: number; unreachableSeconds: number };
    expect(back.retriesNotLogged).toBeGreaterThan(0);
    expect(back.unreachableSeconds).toBeGreaterThanOrEqual(outageMs / 1000);
    // A render node runs activities only, by design: the SDK's warning about it is not a warning here.
    expect(output).not.toContain('No workflows registered');

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(logLineProblems(worker.output())).toEqual([]);
    expect(await leftovers(temp)).toEqual([]);
  }, 300_000);
});
