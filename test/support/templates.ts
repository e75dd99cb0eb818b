import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** Everything a seeded template's objects and rows are made by: a change to any of it builds them again. */
const MADE_BY = ['control-plane/src/templates', 'control-plane/src/media/loudness.ts', 'control-plane/src/media/audio-preparer.ts', 'control-plane/src/services/template.service.ts', 'workflows/src/media'];

interface CachedTemplates {
  rows: Array<{ id: number; name: string; description: string; audio_key: string; audio_duration_ms: number; preview_image_key: string | null; prepared_audio_key: string | null; prepared_audio_ms: number | null }>;
  objects: Array<{ key: string; file: string; contentType: string }>;
}

async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const entry of MADE_BY) {
    const path = join(ROOT, entry);
    const files = entry.endsWith('.ts') ? [path] : (await readdir(path, { recursive: true })).filter((name) => name.endsWith('.ts')).sort().map((name) => join(path, name));
    for (const file of files) hash.update(file).update(await readFile(file).catch(() => Buffer.alloc(0)));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The template songs, seeded into a test service the way `petsing start` seeds them (TemplateService.seed, the
 * real synthesizer, ffmpeg and loudness measurement), once per run and machine: the first test file to need them
 * seeds for real and keeps what that wrote (every object under templates/ and the rows) in the temp folder, keyed by
 * a hash of the code that makes them; the others copy those into their own bucket and database. Seven songs cost
 * each file about 20 s of CPU otherwise. test/template-seeding.test.ts and service-endpoints.test.ts seed for real.
 */
export async function seedTemplates(context: AppContext): Promise<void> {
  const folder = join(tmpdir(), 'petsing-test-templates', await sourcesHash());
  const manifest = await readFile(join(folder, 'manifest.json'), 'utf8').then((text) => JSON.parse(text) as CachedTemplates, () => undefined);
  const { db } = context.database;
  if (manifest) {
    await Promise.all(manifest.objects.map(async (object) => context.objectStore.put(object.key, await readFile(join(folder, object.file)), { contentType: object.contentType })));
    for (const row of manifest.rows) await db.insertInto('templates').values(row).onConflict((conflict) => conflict.column('id').doUpdateSet(row)).execute();
    return;
  }
  await context.services.templates.seed(context.logger);
  const rows = await db.selectFrom('templates').select(['id', 'name', 'description', 'audio_key', 'audio_duration_ms', 'preview_image_key', 'prepared_audio_key', 'prepared_audio_ms']).orderBy('id').execute();
  await mkdir(join(folder, '..'), { recursive: true });
  const staging = await mkdtemp(`${folder}-`);
  const objects: CachedTemplates['objects'] = [];
  for await (const { key } of context.objectStore.list('templates')) {
    const { body, contentType } = await context.objectStore.get(key);
    const file = `${objects.length}`;
    await writeFile(join(staging, file), await buffer(body));
    objects.push({ key, file, contentType });
  }
  await writeFile(join(staging, 'manifest.json'), JSON.stringify({ rows, objects } satisfies CachedTemplates));
  // Another test file may have kept the same at the same moment: either copy is whole, and the first to land stays.
  await rename(staging, folder).catch(() => rm(staging, { recursive: true, force: true }));
}
