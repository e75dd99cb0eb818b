import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { petPhoto } from './pet-photo.ts';
import { PETSING_CLI } from './processes.ts';

const run = promisify(execFile);

/** The pid of the child running `petsing <command…>` that `petsing start` (pid `parent`) supervises, read from /proc. */
export async function supervisedChildPid(parent: number, ...command: string[]): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent && commandLine.endsWith(`petsing.mjs\0${command.join('\0')}\0`)) return Number(entry);
  }
  return undefined;
}

export type V1 = (path: string, init?: RequestInit) => Promise<Response>;

/** A user with `credits` credits and a read-write key, made with the CLI against the running service (`env`), and its /v1 at `baseUrl`. */
export async function cliUser(env: NodeJS.ProcessEnv, baseUrl: string, email: string, credits = 5): Promise<V1> {
  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [PETSING_CLI, '--json', ...args], { env })).stdout);
  await petsing('users', 'create', '--email', email);
  await petsing('credits', 'grant', '--user', email, '--amount', String(credits));
  const { key } = await petsing('api-keys', 'create', '--user', email, '--scopes', 'videos:read,videos:write');
  return (path, init = {}) => fetch(`${baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
}

/** Starts a video of template 1 from a real pet photo (petPhoto) through /v1; answers its id. */
export async function createPetVideo(api: V1): Promise<string> {
  const photo = new FormData();
  photo.append('image', new Blob([new Uint8Array(await petPhoto(640))], { type: 'image/png' }), 'pet.png');
  const uploaded = await api('/v1/images', { method: 'POST', body: photo });
  if (!uploaded.ok) throw new Error(`POST /v1/images answered ${uploaded.status}: ${await uploaded.text()}`);
  const image = (await uploaded.json()) as { id: string };
  const created = await api('/v1/videos', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ template_id: '1', image_id: image.id }) });
  if (created.status !== 202) throw new Error(`POST /v1/videos answered ${created.status}: ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}

export type VideoState = { status: string; stage: string | null; progress: number };

export async function videoState(api: V1, id: string): Promise<VideoState> {
  return (await (await api(`/v1/videos/${id}`)).json()) as VideoState;
}
