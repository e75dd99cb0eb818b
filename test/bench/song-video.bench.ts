/**
 * `npm run bench:song [-- --rounds N --seconds S]`: create → completed for a video of an uploaded song on embedded
 * defaults, the way a person meets it: `petsing start` in a fresh DATA_DIR (PGlite, the local object store, the
 * Temporal dev server, the API, both workers and the render node in one process tree), an API key from the CLI, the
 * template previews of the first start left to finish, then per round a checked photo (POST /v1/images), a new made
 * song (test/support/song-mix.ts: a band throughout, a voice in two verses; a new seed each round, so nothing is
 * reused) uploaded (POST /v1/audio), and POST /v1/videos timed to the `completed` event of the video's stream. A last
 * round makes a second video of the first round's song (its stems are reused). See docs/benchmarks.md (## Render).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { apiCall, videoOutcome } from '../support/http.ts';
import { makeSong, songWav } from '../support/song-mix.ts';
import { freePort, waitFor } from '../support/processes.ts';
import { ms, printTable } from './stats.ts';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '30' } } });
const ROUNDS = Number(options.rounds);
const SECONDS = Number(options.seconds);
const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'control-plane', 'bin', 'petsing.mjs');
const photoPath = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets', 'dog-01.jpg');

const dataDir = await mkdtemp(join(tmpdir(), 'petsing-song-bench-'));
const port = await freePort();
const baseUrl = `http://localhost:${port}`;
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn',
  TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_DEV_UI_PORT: String(await freePort()),
};
const service = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
try {
  await waitFor('GET /health', async () => (await fetch(`${baseUrl}/health`).catch(() => undefined))?.ok === true, 180_000);
  // The first start renders the template previews on the only render node: the rounds start once they are done.
  await waitFor('the template previews', async () => {
    const templates = (await fetch(`${baseUrl}/templates`).then((response) => response.json(), () => [])) as { preview_video_url: string | null }[];
    return templates.length > 0 && templates.every((template) => template.preview_video_url);
  }, 900_000);
  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [cli, '--json', ...args], { env })).stdout);
  await petsing('users', 'create', '--email', 'bench@example.com');
  await petsing('credits', 'grant', '--user', 'bench@example.com', '--amount', String(ROUNDS + 2));
  const { key } = await petsing('api-keys', 'create', '--user', 'bench@example.com', '--scopes', 'videos:read,videos:write');
  const call = async (path: string, body: FormData | object) => {
    const answer = await apiCall(baseUrl, 'POST', path, key, body);
    if (answer.status >= 300) throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return (answer.body as { id: string }).id;
  };
  const photo = await readFile(photoPath);
  const image = new FormData();
  image.append('image', new Blob([photo], { type: 'image/jpeg' }), 'dog-01.jpg');
  const imageId = await call('/v1/images', image);

  /** Seconds from POST /v1/videos to the video's `completed` event. */
  const video = async (audioId: string): Promise<number> => {
    const started = performance.now();
    const id = await call('/v1/videos', { audio_id: audioId, image_id: imageId });
    if ((await videoOutcome(baseUrl, id, key)) !== 'completed') throw new Error(`video ${id} failed`);
    return (performance.now() - started) / 1000;
  };
  const upload = async (seed: number) => {
    const audio = new FormData();
    const song = songWav(makeSong({ seconds: SECONDS, verses: [[SECONDS * 0.13, SECONDS * 0.4], [SECONDS * 0.53, SECONDS * 0.87]], seed }));
    audio.append('audio', new Blob([song], { type: 'audio/wav' }), 'song.wav');
    return await call('/v1/audio', audio);
  };

  const rows: string[][] = [];
  let first = '';
  for (let round = 1; round <= ROUNDS; round++) {
    const audioId = await upload(round);
    first ||= audioId;
    rows.push([`${round}: a new ${SECONDS} s song`, ms((await video(audioId)) * 1000), loadavg()[0]!.toFixed(2)]);
  }
  rows.push([`${ROUNDS + 1}: round 1's song again`, ms((await video(first)) * 1000), loadavg()[0]!.toFixed(2)]);
  console.log(`create → completed on embedded defaults (petsing start), ${SECONDS} s uploaded songs, dog-01.jpg`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}\n`);
  printTable(['video', 'create → completed ms', 'load average'], rows);
} catch (error) {
  console.error(String(error));
  process.exitCode = 1;
} finally {
  service.kill('SIGINT');
  await new Promise((resolve) => service.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}
