import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CHECKOUT_CACHE_DIR } from '@petsing/platform/tools';

/**
 * The template songs a seeding made, kept on this machine so that the next new database (another DATA_DIR, a staging
 * copy, a test run) copies them instead of synthesizing and preparing them again: seven songs cost about 20 s of CPU
 * on two cores, the copy well under one. What is kept is exactly what a seeding writes (every object of a template and
 * the durations its row records), under a hash of the code that makes it (MADE_BY, the lockfile), so any change to
 * that code makes them anew. Kept in CHECKOUT_CACHE_DIR; one that cannot be read or written is only slower.
 */
const KEPT_TEMPLATE_SONGS_DIR = join(CHECKOUT_CACHE_DIR, 'template-songs');

const ROOT = join(import.meta.dirname, '..', '..', '..');
/** Everything a template's songs are made by, from the checkout's root: a change to any of it makes them anew. */
const MADE_BY = [
  'control-plane/src/templates',
  'control-plane/src/media/loudness.ts',
  'control-plane/src/media/audio-preparer.ts',
  'control-plane/src/services/template.service.ts',
  'workflows/src/media',
  'package-lock.json',
];

/** One template's songs as a seeding wrote them. */
export interface KeptTemplateSong {
  objects: Array<{ key: string; body: Buffer; contentType: string }>;
  audioDurationMs: number;
  preparedAudioMs: number;
}

interface Manifest {
  objects: Array<{ key: string; file: string; contentType: string }>;
  audioDurationMs: number;
  preparedAudioMs: number;
}

export class KeptTemplateSongs {
  private folder: Promise<string> | undefined;

  constructor(private readonly root: string = KEPT_TEMPLATE_SONGS_DIR) {}

  /** The songs kept for template `id` by the current code, or undefined. */
  async get(id: number): Promise<KeptTemplateSong | undefined> {
    try {
      const folder = join(await this.codeFolder(), String(id));
      const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as Manifest;
      const objects = await Promise.all(manifest.objects.map(async ({ key, file, contentType }) => ({ key, body: await readFile(join(folder, file)), contentType })));
      return { objects, audioDurationMs: manifest.audioDurationMs, preparedAudioMs: manifest.preparedAudioMs };
    } catch {
      return undefined;
    }
  }

  /** Keeps what a seeding of template `id` wrote (never throws: a cache that cannot be written is only slower). */
  async keep(id: number, song: KeptTemplateSong): Promise<void> {
    try {
      const code = await this.codeFolder();
      await mkdir(code, { recursive: true, mode: 0o700 });
      const staging = await mkdtemp(join(code, `${id}-`));
      const manifest: Manifest = { objects: [], audioDurationMs: song.audioDurationMs, preparedAudioMs: song.preparedAudioMs };
      for (const [index, { key, body, contentType }] of song.objects.entries()) {
        await writeFile(join(staging, String(index)), body, { mode: 0o600 });
        manifest.objects.push({ key, file: String(index), contentType });
      }
      await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest), { mode: 0o600 });
      // Whole or not at all: another process keeping the same at the same moment leaves one whole copy.
      await rename(staging, join(code, String(id))).catch(() => rm(staging, { recursive: true, force: true }));
      // Songs of older code go.
      for (const entry of await readdir(this.root)) {
        if (join(this.root, entry) !== code) await rm(join(this.root, entry), { recursive: true, force: true });
      }
    } catch {
      // Read-only: every new database makes its songs.
    }
  }

  private codeFolder(): Promise<string> {
    this.folder ??= (async () => {
      const hash = createHash('sha256');
      for (const entry of MADE_BY) {
        const path = join(ROOT, entry);
        const files = /\.\w+$/.test(entry)
          ? [path]
          : (await readdir(path, { recursive: true }).catch(() => [] as string[])).filter((name) => name.endsWith('.ts')).sort().map((name) => join(path, name));
        for (const file of files) hash.update(file.slice(ROOT.length)).update('\0').update(await readFile(file).catch(() => Buffer.alloc(0))).update('\0');
      }
      return join(this.root, hash.digest('hex').slice(0, 16));
    })();
    return this.folder;
  }
}

