import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '@petsing/platform/storage';
import { createLogger } from '../src/logging/logger.ts';
import { AudioPreparer } from '../src/media/audio-preparer.ts';
import { TemplateRepository } from '../src/repositories/template.repository.ts';
import { TemplateService } from '../src/services/template.service.ts';
import { templateCatalog } from '../src/templates/template-catalog.ts';
import { templateObjectKeys } from '../src/templates/template-objects.ts';
import { KeptTemplateSongs } from '../src/templates/kept-template-songs.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { json } from '../../test/support/http.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/**
 * A seeding builds every song: synthesized in stereo, its soundtrack encoded and measured (issue 35), about 20 s on
 * two loaded cores, more while other test files share them; unless this machine kept them (kept-template-songs.ts).
 */
const SEEDING_TIMEOUT_MS = 180_000;

// An API's first start serves while the template songs build (issue 26): what a client sees meanwhile.
describe('template songs built in the background', () => {
  let service: TestService;
  let scratch: string;

  beforeAll(async () => {
    service = await startTestService();
    scratch = await mkdtemp(join(tmpdir(), 'petsing-seeding-'));
  });
  afterAll(async () => {
    await service.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('answers GET /templates with every song once they are built, never a partial list', async () => {
    const templateRows = () => service.database.db.selectFrom('templates').select('id').execute();
    const seeding = service.context.services.templates.seedInBackground(service.context.logger);
    expect(await templateRows()).toHaveLength(0);

    const response = await fetch(`${service.baseUrl}/templates`);
    expect(response.status).toBe(200);
    const templates = (await json(response)) as { id: string; audio_url: string }[];
    expect(templates.map((template) => template.id)).toEqual(templateCatalog.map((definition) => definition.id));
    const audio = await fetch(templates.at(-1)!.audio_url);
    expect(audio.status).toBe(200);
    await seeding;
    expect(await templateRows()).toHaveLength(templateCatalog.length);
  }, SEEDING_TIMEOUT_MS);

  it('logs a seeding that failed, fails template requests meanwhile, and builds again at the next request', async () => {
    // An object store whose folder is taken by a file: every write fails until the file goes.
    const root = join(scratch, 'objects');
    await writeFile(root, 'not a folder');
    const objects = new LocalObjectStore({ root, publicBaseUrl: 'http://127.0.0.1', signingSecret: 'a-signing-secret-for-tests' });
    // The songs kept on this machine (the first test made them), so the build after the failure is a copy.
    const templates = new TemplateService(new TemplateRepository(service.database.db), objects, new AudioPreparer(objects), new KeptTemplateSongs());
    const { lines, sink } = captureLines();

    await templates.seedInBackground(createLogger('info', 'petsing', sink));
    expect(lines.join('')).toContain('could not build the template songs');
    await expect(templates.list()).rejects.toThrow();

    await rm(root);
    const listed = await templates.list();
    expect(listed.map((template) => String(template.id))).toEqual(templateCatalog.map((definition) => definition.id));
    expect(await objects.exists(templateObjectKeys(listed[0]!.id).preparedAudio)).toBe(true);
  }, SEEDING_TIMEOUT_MS);

  it('copies the songs this machine kept for another database by the same code, instead of making them', async () => {
    // Kept songs that no synthesizer makes: a copy is recognisable by its bytes.
    const kept = new KeptTemplateSongs(join(scratch, 'kept'));
    for (const definition of templateCatalog) {
      const keys = templateObjectKeys(Number(definition.id));
      await kept.keep(Number(definition.id), {
        objects: [keys.audio, keys.previewImage, keys.mouthTrack, keys.mix, keys.voice, keys.preparedAudio, keys.deliveryAudio].map((key) => ({ key, body: Buffer.from(`kept ${key}`), contentType: 'application/x-kept' })),
        audioDurationMs: 1000 + Number(definition.id),
        preparedAudioMs: 2000 + Number(definition.id),
      });
    }
    const objects = new LocalObjectStore({ root: join(scratch, 'copied'), publicBaseUrl: 'http://127.0.0.1', signingSecret: 'a-signing-secret-for-tests' });
    await service.database.db.deleteFrom('templates').execute();
    const templates = new TemplateService(new TemplateRepository(service.database.db), objects, new AudioPreparer(objects), kept);

    // A service stopping before the seeding began builds nothing.
    expect(await templates.seed(createLogger('silent'), AbortSignal.abort())).toEqual({ created: 0, kept: 0 });
    expect(await service.database.db.selectFrom('templates').select('id').execute()).toEqual([]);
    expect(await templates.seed(createLogger('silent'))).toEqual({ created: templateCatalog.length, kept: 0 });
    const rows = await templates.list();
    expect(rows.map((row) => [row.id, row.audio_duration_ms, row.prepared_audio_ms])).toEqual(templateCatalog.map((definition) => [Number(definition.id), 1000 + Number(definition.id), 2000 + Number(definition.id)]));
    const { deliveryAudio } = templateObjectKeys(rows[0]!.id);
    const copied = await objects.get(deliveryAudio);
    expect([(await buffer(copied.body)).toString(), copied.contentType]).toEqual([`kept ${deliveryAudio}`, 'application/x-kept']);
    // Seeded once, a second seeding finds everything in place.
    expect(await templates.seed(createLogger('silent'))).toEqual({ created: 0, kept: templateCatalog.length });
  });
});
