import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sniffContentType } from '../src/media/content-sniffer.ts';
import { probeMedia, runMediaTool } from '../src/media/ffmpeg.ts';
import { json, type Json } from '../../test/support/http.ts';
import { waitFor } from '../../test/support/processes.ts';
import { signInWebUser } from '../../test/support/accounts.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';
import { makeSong, songWav } from '../../test/support/song-mix.ts';
import { seedTemplates } from '../../test/support/templates.ts';

type Part = string | { body: Buffer; name: string; type?: string };

describe('web video creation and deletion', () => {
  let service: TestService;
  let fixtures: string;
  const media: Record<string, Buffer> = {};

  const signIn = (email: string) => signInWebUser(service, email);
  const subscribe = async (userId: string) => {
    await service.database.db.updateTable('users').set({ subscription_status: 'active' }).where('id', '=', userId).execute();
  };
  /**
   * These tests are about the create flow, so each form points at the pet's mouth unless it says otherwise:
   * with a hint, the photo is not checked by a render node (none runs here; faces.test.ts covers the check).
   */
  const form = (parts: Record<string, Part | Part[]>) => {
    const data = new FormData();
    if (parts.image && parts.face === undefined) data.append('face', JSON.stringify({ mouth: { x: 0.5, y: 0.6 } }));
    for (const [field, values] of Object.entries(parts)) {
      for (const part of [values].flat()) {
        if (typeof part === 'string') data.append(field, part);
        else data.append(field, new Blob([part.body], { type: part.type ?? 'application/octet-stream' }), part.name);
      }
    }
    return data;
  };
  const post = async (path: string, token: string | undefined, body: FormData | string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method: 'POST',
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
      body,
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const deleteVideo = async (token: string | undefined, body: unknown) => {
    const response = await fetch(`${service.baseUrl}/delete-video`, {
      method: 'DELETE',
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const pet = () => ({ body: media.png!, name: 'pet.png', type: 'image/png' });
  const audioFile = (name: string) => ({ body: media[name]!, name, type: 'audio/mpeg' });

  const rowsOf = (userId: string) => service.database.db.selectFrom('videos').selectAll().where('user_id', '=', userId).execute();
  const freeCredits = async (token: string) =>
    (await json(fetch(`${service.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } }))).free_credits as number;
  /** Every object key under videos/ in the local object store. */
  const videoObjects = async () => {
    const root = join(service.env.DATA_DIR!, 'object-store', 'objects', 'videos');
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1));
  };
  const uploadDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('petsing-upload-'));
  const readObject = async (key: string) => {
    const object = await service.context.objectStore.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of object.body) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks), contentType: object.contentType };
  };

  /** Runs a refused request and checks it left nothing behind: no row, no stored object, no temp files, no credit spent. */
  const expectRefusedCleanly = async (userId: string, token: string, attempt: () => Promise<{ status: number; body: Json }>) => {
    const [rowsBefore, objectsBefore, dirsBefore, creditsBefore] = [await rowsOf(userId), await videoObjects(), await uploadDirs(), await freeCredits(token)];
    const result = await attempt();
    expect(result.body.error).toEqual({ code: expect.any(String), message: expect.any(String), status: result.status, hint: expect.any(String), documentation_url: expect.any(String), retryable: false });
    expect(await rowsOf(userId)).toHaveLength(rowsBefore.length);
    expect(await videoObjects()).toEqual(objectsBefore);
    expect((await uploadDirs()).filter((dir) => !dirsBefore.includes(dir))).toEqual([]);
    expect(await freeCredits(token)).toBe(creditsBefore);
    return result;
  };

  let sharedTmp: string | undefined;
  beforeAll(async () => {
    // Uploads of this file land in a temporary folder of its own: other files upload in parallel, and
    // their folders in the shared one would look like leftovers here.
    sharedTmp = process.env.TMPDIR;
    process.env.TMPDIR = await mkdtemp(join(tmpdir(), 'petsing-web-videos-tmp-'));
    service = await startTestService({ temporal: true });
    await seedTemplates(service.context);
    fixtures = await mkdtemp(join(tmpdir(), 'petsing-web-videos-'));
    media.png = await petPhoto(256);
    media.jpg = await sharp(media.png).jpeg().toBuffer();
    const tone = async (name: string, seconds: number, codec: string[]) => {
      const path = join(fixtures, name);
      await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, ...codec, path]);
      media[name] = await readFile(path);
    };
    await Promise.all([
      tone('song.mp3', 4, ['-c:a', 'libmp3lame']),
      tone('short.mp3', 1, ['-c:a', 'libmp3lame']),
      tone('long.wav', 31, []),
      tone('song.wav', 3, []),
      tone('song.webm', 3, ['-c:a', 'libopus']),
      tone('song.m4a', 3, ['-c:a', 'aac']),
      tone('song.ogg', 3, ['-c:a', 'libvorbis']),
    ]);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    if (fixtures) await rm(fixtures, { recursive: true, force: true });
    const ownTmp = process.env.TMPDIR;
    if (sharedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = sharedTmp;
    if (ownTmp && ownTmp !== sharedTmp) await rm(ownTmp, { recursive: true, force: true });
  });

  describe('POST /create-with-template', () => {
    it('queues a watermarked video for one free credit and stores the photo', async () => {
      const user = await signIn('template@example.com');
      expect(await freeCredits(user.token)).toBe(2);
      const { status, body } = await post('/create-with-template', user.token, form({ image: pet(), template_id: '1' }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'pending',
        has_watermark: true,
        free_credits_remaining: 1,
        video: expect.objectContaining({ id: body.id, status: 'pending', template_id: '1', has_watermark: true, origin: 'web', video_url: null }),
      });
      const [row] = await rowsOf(user.id);
      expect(row).toMatchObject({ id: body.id, status: 'pending', has_watermark: true, payment: 'free_credit', template_id: 1, image_key: `videos/${body.id}/image.png`, audio_key: null });
      expect(row!.workflow_id).toEqual(expect.any(String));
      expect((await readObject(row!.image_key!)).body.equals(media.png!)).toBe(true);
      expect(await freeCredits(user.token)).toBe(1);
    });

    it('answers 400 no_free_credits once the month is used up, also for two creates racing for the last credit', async () => {
      const user = await signIn('racer@example.com');
      expect((await post('/create-with-template', user.token, form({ image: pet(), template_id: '1' }))).status).toBe(200);
      const raced = await Promise.all([1, 2].map(() => post('/create-with-template', user.token, form({ image: { body: media.jpg!, name: 'pet.jpg' }, template_id: '2' }))));
      expect(raced.map((result) => result.status).sort()).toEqual([200, 400]);
      const refused = raced.find((result) => result.status === 400)!;
      expect(refused.body.error).toMatchObject({ code: 'no_free_credits', status: 400, hint: expect.stringContaining('subscribe') });
      expect(await rowsOf(user.id)).toHaveLength(2);
      expect(await freeCredits(user.token)).toBe(0);

      const again = await expectRefusedCleanly(user.id, user.token, () => post('/create-with-template', user.token, form({ image: pet(), template_id: '1' })));
      expect(again.status).toBe(400);
      expect(again.body.error.code).toBe('no_free_credits');
      // Only the two paid videos have objects.
      const ids = new Set((await rowsOf(user.id)).map((row) => row.id));
      const owners = new Set((await videoObjects()).map((key) => key.split('/')[0]));
      for (const id of ids) expect(owners.has(id)).toBe(true);
    });

    it('lets a subscriber create without spending a credit and without watermark', async () => {
      const user = await signIn('subscriber@example.com');
      await subscribe(user.id);
      const { status, body } = await post('/create-with-template', user.token, form({ image: { body: media.jpg!, name: 'pet.jpg', type: 'image/jpeg' }, template_id: '1' }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ status: 'pending', has_watermark: false, free_credits_remaining: null, video: { has_watermark: false } });
      const [row] = await rowsOf(user.id);
      expect(row).toMatchObject({ payment: 'subscription', has_watermark: false, image_key: `videos/${body.id}/image.jpg` });
      expect(await freeCredits(user.token)).toBe(2);
    });

    it('refuses missing or invalid input with 400 and leaves nothing behind', async () => {
      const user = await signIn('careless@example.com');
      const heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(200)]);
      const cases: [string, () => Promise<{ status: number; body: Json }>, string][] = [
        ['missing image', () => post('/create-with-template', user.token, form({ template_id: '1' })), 'invalid_request'],
        ['empty image (file input left empty)', () => post('/create-with-template', user.token, form({ image: { body: Buffer.alloc(0), name: '' }, template_id: '1' })), 'invalid_request'],
        ['missing template id', () => post('/create-with-template', user.token, form({ image: pet() })), 'invalid_request'],
        ['blank template id', () => post('/create-with-template', user.token, form({ image: pet(), template_id: ' ' })), 'invalid_request'],
        ['unknown template', () => post('/create-with-template', user.token, form({ image: pet(), template_id: '999' })), 'unknown_template'],
        ['non-numeric template', () => post('/create-with-template', user.token, form({ image: pet(), template_id: 'one' })), 'unknown_template'],
        // /v1 takes ids exactly as given, and so does the web app.
        ['padded template id', () => post('/create-with-template', user.token, form({ image: pet(), template_id: '  1  ' })), 'unknown_template'],
        ['text renamed .png', () => post('/create-with-template', user.token, form({ image: { body: Buffer.from('just some notes, not a photo\n'.repeat(20)), name: 'pet.png', type: 'image/png' }, template_id: '1' })), 'unsupported_image_format'],
        ['truncated PNG (valid header, missing pixels)', () => post('/create-with-template', user.token, form({ image: { body: media.png!.subarray(0, Math.floor(media.png!.length / 2)), name: 'pet.png' }, template_id: '1' })), 'unsupported_image_format'],
        ['60-megapixel photo (more than the render node takes)', async () => post('/create-with-template', user.token, form({ image: { body: await sharp({ create: { width: 10_000, height: 6_000, channels: 3, background: '#a0a0a0' } }).png().toBuffer(), name: 'huge.png' }, template_id: '1' })), 'unsupported_image_format'],
        ['HEIC photo', () => post('/create-with-template', user.token, form({ image: { body: heic, name: 'pet.heic', type: 'image/png' }, template_id: '1' })), 'unsupported_image_format'],
        ['unexpected file field', () => post('/create-with-template', user.token, form({ image: pet(), template_id: '1', song: audioFile('song.mp3') })), 'invalid_request'],
        ['two images', () => post('/create-with-template', user.token, form({ image: [pet(), pet()], template_id: '1' })), 'invalid_request'],
        ['three files', () => post('/create-with-audio', user.token, form({ image: pet(), audio: [audioFile('song.mp3'), audioFile('song.mp3')] })), 'invalid_request'],
        ['too many fields', () => post('/create-with-template', user.token, form({ image: pet(), template_id: '1', note: Array.from({ length: 10 }, (_, index) => String(index)) })), 'invalid_request'],
        ['JSON instead of a form', () => post('/create-with-template', user.token, JSON.stringify({ template_id: '1' }), { 'Content-Type': 'application/json' }), 'multipart_required'],
        ['multipart without boundary', () => post('/create-with-template', user.token, 'x', { 'Content-Type': 'multipart/form-data' }), 'invalid_request'],
        ['truncated form', () => post('/create-with-template', user.token, '--b\r\nContent-Disposition: form-data; name="template_id"\r\n\r\n1', { 'Content-Type': 'multipart/form-data; boundary=b' }), 'invalid_request'],
      ];
      for (const [name, attempt, code] of cases) {
        const { status, body } = await expectRefusedCleanly(user.id, user.token, attempt);
        expect(status, name).toBe(400);
        expect(body.error.code, `${name}: ${body.message}`).toBe(code);
      }
    });

    it('answers 413 for an image over 15 MB, naming the field and the limit, and stores nothing', async () => {
      const user = await signIn('huge@example.com');
      const huge = Buffer.alloc(15 * 1024 * 1024 + 1);
      media.png!.copy(huge, 0, 0, 64);
      const { status, body } = await expectRefusedCleanly(user.id, user.token, () =>
        post('/create-with-template', user.token, form({ image: { body: huge, name: 'pet.png', type: 'image/png' }, template_id: '1' })),
      );
      expect(status).toBe(413);
      expect(body.error.code).toBe('payload_too_large');
      expect(body.message).toContain('"image"');
      expect(body.message).toContain('15 MB');
    });

    it('removes the received files when the client aborts the upload', async () => {
      const user = await signIn('quitter@example.com');
      const dirsBefore = await uploadDirs();
      const { port } = new URL(service.baseUrl);
      const upload = request({
        host: '127.0.0.1', port, method: 'POST', path: '/create-with-template',
        headers: { Authorization: `Bearer ${user.token}`, 'Content-Type': 'multipart/form-data; boundary=xyz', 'Content-Length': String(10 * 1024 * 1024) },
      });
      upload.on('error', () => {});
      upload.write(`--xyz\r\nContent-Disposition: form-data; name="image"; filename="pet.png"\r\nContent-Type: image/png\r\n\r\n`);
      upload.write(media.png!);
      let started: string[] = [];
      await waitFor('the upload to be received', async () => {
        started = (await uploadDirs()).filter((dir) => !dirsBefore.includes(dir));
        return started.length > 0;
      }, 10_000);
      upload.destroy();
      await waitFor('the received files to be removed', async () => (await uploadDirs()).every((dir) => !started.includes(dir)), 10_000);
      expect(await rowsOf(user.id)).toHaveLength(0);
    });
  });

  describe('POST /audio-check', () => {
    const wav = (name: string, body: Buffer) => ({ body, name, type: 'audio/wav' });
    const lavfi = async (name: string, source: string, filters: string[] = []) => {
      const path = join(fixtures, name);
      await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', source, ...filters, '-c:a', 'pcm_s16le', path]);
      return wav(name, await readFile(path));
    };

    it('finds the singing voice of a song, and warns before paying of an instrumental, without spending anything', async () => {
      const user = await signIn('listener@example.com');
      const credits = await freeCredits(user.token);
      const sung = await post('/audio-check', user.token, form({ audio: wav('sung.wav', songWav(makeSong({ seconds: 6, verses: [[1, 5]] }))) }));
      expect(sung.status, JSON.stringify(sung.body)).toBe(200);
      expect(sung.body).toEqual({ vocals_found: true, voiced_seconds: expect.any(Number), audio_start_seconds: 0, duration_seconds: expect.closeTo(6, 1), warning: null });
      expect(sung.body.voiced_seconds).toBeGreaterThan(2.5);
      expect(sung.body.voiced_seconds).toBeLessThan(4.5);

      const band = await post('/audio-check', user.token, form({ audio: wav('band.wav', songWav(makeSong({ seconds: 6, verses: [] }))) }));
      expect(band.status, JSON.stringify(band.body)).toBe(200);
      expect(band.body).toMatchObject({ vocals_found: false, voiced_seconds: 0 });
      expect(band.body.warning).toMatch(/^No singing voice found/);

      // The same file again: its stems are stored by its hash and reused (the video made from it reuses them too).
      const separations = service.context.services.vocalStems.separations;
      const again = await post('/audio-check', user.token, form({ audio: wav('band.wav', songWav(makeSong({ seconds: 6, verses: [] }))) }));
      expect(again.body).toEqual(band.body);
      expect(service.context.services.vocalStems.separations).toBe(separations);
      expect(await freeCredits(user.token)).toBe(credits);
      expect(await rowsOf(user.id)).toEqual([]);
    }, 120_000);

    it('answers silence, noise, clipping and clips of 2.0 and 30 s without an error, and refuses what the create refuses', async () => {
      const user = await signIn('odd-audio@example.com');
      const cases: [string, Part, boolean | null][] = [
        ['silence', await lavfi('silence.wav', 'anullsrc=r=44100:cl=stereo', ['-t', '3']), false],
        ['noise', await lavfi('noise.wav', 'anoisesrc=d=3:c=white:a=0.5'), null],
        ['clipping', await lavfi('clipped.wav', 'sine=frequency=220:duration=3', ['-af', 'volume=40dB']), null],
        ['2.0 s', wav('two.wav', songWav(makeSong({ seconds: 2, verses: [[0.2, 1.8]] }))), true],
        ['30 s', wav('thirty.wav', songWav(makeSong({ seconds: 30, verses: [[4, 12], [18, 26]] }))), true],
      ];
      for (const [name, audio, found] of cases) {
        const { status, body } = await post('/audio-check', user.token, form({ audio }));
        expect(status, `${name}: ${JSON.stringify(body)}`).toBe(200);
        expect(typeof body.vocals_found, name).toBe('boolean');
        if (found !== null) expect(body.vocals_found, name).toBe(found);
        expect(body.warning === null, name).toBe(body.vocals_found);
      }
      const short = await expectRefusedCleanly(user.id, user.token, () => post('/audio-check', user.token, form({ audio: audioFile('short.mp3') })));
      expect(short.status).toBe(400);
      expect(short.body.error.code).toBe('audio_duration_out_of_range');
      const missing = await expectRefusedCleanly(user.id, user.token, () => post('/audio-check', user.token, form({})));
      expect(missing.body.error.code).toBe('invalid_request');
      const foreign = await expectRefusedCleanly(user.id, user.token, () => post('/audio-check', user.token, form({ audio_url: 'https://example.com/song.mp3' })));
      expect(foreign.body.error.code).toBe('unknown_audio_url');
    }, 180_000);

    it('checks a hosted soundtrack longer than a video in the 30 s a video would sing: its most sung window', async () => {
      const user = await signIn('long-song@example.com');
      // 50 s: a verse from 31 s to 45 s, none before: a video sings the 30 s that hold it.
      const wavPath = join(fixtures, 'long-song.wav');
      const mp3 = join(fixtures, 'long-song.mp3');
      await writeFile(wavPath, songWav(makeSong({ seconds: 50, verses: [[31, 45]] })));
      await runMediaTool('ffmpeg', ['-v', 'error', '-y', '-i', wavPath, '-c:a', 'libmp3lame', '-b:a', '192k', mp3]);
      const hosted = await service.context.services.hostedAudio.store(user.id, 'social', mp3, 50);
      const { status, body } = await post('/audio-check', user.token, form({ audio_url: hosted.url }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ vocals_found: true, duration_seconds: 30, warning: null });
      // The window ends with the soundtrack (the verse is too near its end for a window from its first phrase).
      expect(body.audio_start_seconds).toBeCloseTo(20, 0);
      expect(body.voiced_seconds).toBeGreaterThan(10);
    }, 120_000);
  });

  describe('POST /create-with-audio', () => {
    it('queues a video from an uploaded MP3, stored as sent', async () => {
      const user = await signIn('singer@example.com');
      const { status, body } = await post('/create-with-audio', user.token, form({ image: pet(), audio: audioFile('song.mp3') }));
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ status: 'pending', has_watermark: true, free_credits_remaining: 1, video: { template_id: null, has_watermark: true } });
      const [row] = await rowsOf(user.id);
      expect(row).toMatchObject({ id: body.id, template_id: null, audio_key: `videos/${body.id}/audio.mp3`, has_watermark: true });
      const stored = await readObject(row!.audio_key!);
      expect(stored.contentType).toBe('audio/mpeg');
      expect(stored.body.equals(media['song.mp3']!)).toBe(true);
    });

    it.each(['song.wav', 'song.webm', 'song.m4a'])('transcodes %s to MP3 before storing it', async (name) => {
      const user = await signIn(`transcode-${name.replace('.', '-')}@example.com`);
      await subscribe(user.id);
      const { status, body } = await post('/create-with-audio', user.token, form({ image: pet(), audio: { body: media[name]!, name, type: 'audio/mpeg' } }));
      expect(status, JSON.stringify(body)).toBe(200);
      const [row] = await rowsOf(user.id);
      expect(row!.audio_key).toBe(`videos/${body.id}/audio.mp3`);
      const stored = await readObject(row!.audio_key!);
      expect(stored.contentType).toBe('audio/mpeg');
      expect(sniffContentType(stored.body, 'media')).toBe('audio/mpeg');
      const copy = join(fixtures, `stored-${name}.mp3`);
      await writeFile(copy, stored.body);
      const probed = await probeMedia(copy);
      expect(probed.formatName).toBe('mp3');
      expect(probed.durationSeconds).toBeGreaterThan(2.9);
      expect(probed.durationSeconds).toBeLessThan(3.2);
    });

    it('refuses audio outside 2 to 30 seconds, unsupported or missing audio, with 400 and nothing left behind', async () => {
      const user = await signIn('picky@example.com');
      const cases: [string, () => Promise<{ status: number; body: Json }>, string][] = [
        ['1 s', () => post('/create-with-audio', user.token, form({ image: pet(), audio: audioFile('short.mp3') })), 'audio_duration_out_of_range'],
        ['31 s', () => post('/create-with-audio', user.token, form({ image: pet(), audio: { body: media['long.wav']!, name: 'long.wav' } })), 'audio_duration_out_of_range'],
        ['Ogg Vorbis', () => post('/create-with-audio', user.token, form({ image: pet(), audio: { body: media['song.ogg']!, name: 'song.mp3', type: 'audio/mpeg' } })), 'unsupported_audio_format'],
        ['a photo as audio', () => post('/create-with-audio', user.token, form({ image: pet(), audio: { body: media.png!, name: 'song.mp3', type: 'audio/mpeg' } })), 'unsupported_audio_format'],
        ['a truncated MP3', () => post('/create-with-audio', user.token, form({ image: pet(), audio: { body: media['song.mp3']!.subarray(0, 600), name: 'song.mp3' } })), 'audio_duration_out_of_range'],
        ['missing audio', () => post('/create-with-audio', user.token, form({ image: pet() })), 'invalid_request'],
        ['missing image', () => post('/create-with-audio', user.token, form({ audio: audioFile('song.mp3') })), 'invalid_request'],
        ['audio and audio_url', () => post('/create-with-audio', user.token, form({ image: pet(), audio: audioFile('song.mp3'), audio_url: `${service.baseUrl}/media/audio/${crypto.randomUUID()}.mp3` })), 'invalid_request'],
        ['unknown audio_url', () => post('/create-with-audio', user.token, form({ image: pet(), audio_url: `${service.baseUrl}/media/audio/${crypto.randomUUID()}.mp3` })), 'unknown_audio_url'],
        ['foreign audio_url', () => post('/create-with-audio', user.token, form({ image: pet(), audio_url: 'https://example.com/song.mp3' })), 'unknown_audio_url'],
      ];
      for (const [name, attempt, code] of cases) {
        const { status, body } = await expectRefusedCleanly(user.id, user.token, attempt);
        expect(status, name).toBe(400);
        expect(body.error.code, `${name}: ${body.message}`).toBe(code);
      }
      const tooBig = Buffer.alloc(20 * 1024 * 1024 + 1);
      media['song.mp3']!.copy(tooBig, 0, 0, 64);
      const { status, body } = await expectRefusedCleanly(user.id, user.token, () => post('/create-with-audio', user.token, form({ image: pet(), audio: { body: tooBig, name: 'song.mp3' } })));
      expect(status).toBe(413);
      expect(body.message).toContain('"audio"');
      expect(body.message).toContain('20 MB');
    });

    it('takes the audio from the caller’s hosted audio URL, and refuses another user’s', async () => {
      const owner = await signIn('speaker@example.com');
      const stranger = await signIn('stranger@example.com');
      const mp3 = join(fixtures, 'song.mp3');
      await writeFile(mp3, media['song.mp3']!);
      const hosted = await service.context.services.hostedAudio.store(owner.id, 'tts', mp3, 4);

      const { status, body } = await post('/create-with-audio', owner.token, form({ image: pet(), audio_url: hosted.url }));
      expect(status, JSON.stringify(body)).toBe(200);
      const [row] = await rowsOf(owner.id);
      expect(row!.audio_key).toMatch(new RegExp(`^videos/${body.id}/`));
      expect((await readObject(row!.audio_key!)).body.equals(media['song.mp3']!)).toBe(true);

      const refused = await expectRefusedCleanly(stranger.id, stranger.token, () => post('/create-with-audio', stranger.token, form({ image: pet(), audio_url: hosted.url })));
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('unknown_audio_url');
    });
  });

  it('answers 401 on every endpoint without an ID token or with an invalid one', async () => {
    const user = await signIn('locked@example.com');
    for (const token of [undefined, 'not-a-jwt', `${user.token.slice(0, -4)}AAAA`]) {
      for (const path of ['/create-with-template', '/create-with-audio']) {
        const { status, body } = await post(path, token, form({ image: pet(), template_id: '1', audio: audioFile('song.mp3') }));
        expect(status, `${path} ${token}`).toBe(401);
        expect(body.error.code).toBe('unauthorized');
      }
      const deleted = await deleteVideo(token, { video_id: crypto.randomUUID() });
      expect(deleted.status).toBe(401);
    }
    expect(await rowsOf(user.id)).toHaveLength(0);
  });

  describe('DELETE /delete-video', () => {
    const createVideo = async (token: string) => {
      const { status, body } = await post('/create-with-audio', token, form({ image: pet(), audio: { body: media['song.wav']!, name: 'song.wav' } }));
      expect(status, JSON.stringify(body)).toBe(200);
      return body.id as string;
    };

    it('removes the row and every stored object of the video', async () => {
      const user = await signIn('tidy@example.com');
      const id = await createVideo(user.token);
      const [row] = await rowsOf(user.id);
      expect((await videoObjects()).filter((key) => key.startsWith(`${id}/`)).sort()).toEqual([`${id}/audio.mp3`, `${id}/image.png`]);

      const { status, body } = await deleteVideo(user.token, { video_id: id });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toEqual({ message: `Video ${id} deleted.` });
      expect(await rowsOf(user.id)).toHaveLength(0);
      expect(await service.context.objectStore.exists(row!.image_key!)).toBe(false);
      expect(await service.context.objectStore.exists(row!.audio_key!)).toBe(false);
      expect((await videoObjects()).filter((key) => key.startsWith(`${id}/`))).toEqual([]);
      expect((await deleteVideo(user.token, { video_id: id })).status).toBe(404);
    });

    it("answers 404 for another user's video, which stays, and 400 for a missing or malformed id", async () => {
      const owner = await signIn('keeper@example.com');
      const other = await signIn('intruder@example.com');
      const id = await createVideo(owner.token);
      const objects = (await videoObjects()).filter((key) => key.startsWith(`${id}/`));

      const foreign = await deleteVideo(other.token, { video_id: id });
      const missing = await deleteVideo(other.token, { video_id: crypto.randomUUID() });
      expect([foreign.status, missing.status]).toEqual([404, 404]);
      expect(foreign.body.error.code).toBe('not_found');
      expect(missing.body.error.code).toBe('not_found');
      expect(foreign.body.message.replace(id, 'ID')).toBe(missing.body.message.replace(/[0-9a-f-]{36}/, 'ID'));
      expect(await rowsOf(owner.id)).toHaveLength(1);
      expect((await videoObjects()).filter((key) => key.startsWith(`${id}/`))).toEqual(objects);

      for (const body of [{}, { video_id: 'abc' }, { id }]) {
        const refused = await deleteVideo(owner.token, body);
        expect(refused.status, JSON.stringify(body)).toBe(400);
        expect(refused.body.error.code).toBe('invalid_request');
      }
      expect(await rowsOf(owner.id)).toHaveLength(1);
    });

    it('answers 500 delete_failed when the stored files cannot be removed', async () => {
      const user = await signIn('unlucky@example.com');
      await subscribe(user.id);
      const id = await createVideo(user.token);
      const [row] = await rowsOf(user.id);
      const failure = vi.spyOn(service.context.objectStore, 'deletePrefix').mockRejectedValueOnce(new Error('storage is down'));
      try {
        const { status, body } = await deleteVideo(user.token, { video_id: id });
        expect(status).toBe(500);
        expect(body.error).toMatchObject({ code: 'delete_failed', status: 500 });
        expect(body.message).not.toContain('storage is down');
      } finally {
        failure.mockRestore();
      }
      // Nothing was lost: the row is still there, so the retry finds the video and removes everything.
      expect(await rowsOf(user.id)).toHaveLength(1);
      expect((await deleteVideo(user.token, { video_id: id })).status).toBe(200);
      expect(await rowsOf(user.id)).toHaveLength(0);
      expect(await service.context.objectStore.exists(row!.image_key!)).toBe(false);
      expect(await service.context.objectStore.exists(row!.audio_key!)).toBe(false);
    });
  });
});
