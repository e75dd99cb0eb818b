import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_LOUDNESS } from '@petsing/workflows/media';
import { createTestAccount } from './support/accounts.ts';
import type { Json } from './support/http.ts';
import { startRenderingService } from './support/image-host.ts';
import { waitFor } from './support/processes.ts';
import { audioStreamsOf, channelLevels, durationsOf, loudnessOf, stereoWidthDb, writeStereoSource } from './support/soundtrack.ts';
import { seedTemplates } from './support/templates.ts';

/**
 * Issue 35, end to end (real API, Temporal, control worker and render node): the sound of a finished video, as an
 * owner downloads it, is the source's own stereo at 48 kHz in AAC of 192 kb/s, at −14 LUFS with true peaks at most
 * −1 dBTP: for an uploaded stereo clip of 2.5 s (a length single-pass loudnorm got wrong) and for a template song.
 */
describe('the soundtrack of a finished video', () => {
  let rendering: Awaited<ReturnType<typeof startRenderingService>>;
  let owner: Awaited<ReturnType<typeof createTestAccount>>;
  let scratch: string;
  let source: string;

  const send = async (method: string, path: string, body?: unknown) => {
    const isForm = body instanceof FormData;
    const response = await fetch(`${rendering.service.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${owner.readWrite}`, ...(body && !isForm ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: isForm ? body : JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  /** Creates a video of the sample pet singing `sound`, waits for it, and downloads its MP4. */
  const renderedVideo = async (sound: { audio_id: string } | { template_id: string }) => {
    const created = await send('POST', '/v1/videos', { image_url: rendering.imageHost.url('/pet.png'), ...sound });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    let video: Json = {};
    await waitFor(`video ${created.body.id} to finish`, async () => {
      video = (await send('GET', `/v1/videos/${created.body.id}`)).body;
      return ['completed', 'failed'].includes(video.status);
    }, 240_000);
    expect(video, JSON.stringify(video)).toMatchObject({ status: 'completed' });
    const path = join(scratch, `${created.body.id}.mp4`);
    await writeFile(path, Buffer.from(await (await fetch(video.video_url)).arrayBuffer()));
    return path;
  };
  /** What every video's sound must be: stereo 48 kHz AAC of at least 160 kb/s, −14 ± 1 LUFS, true peak ≤ −1 dBTP. */
  const expectDeliveredSound = async (mp4: string) => {
    const [stream] = await audioStreamsOf(mp4);
    expect(stream).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 2 });
    expect(stream!.bitRate).toBeGreaterThanOrEqual(160_000);
    const { integratedLufs, truePeakDbtp } = await loudnessOf(mp4);
    expect(Math.abs(integratedLufs - DELIVERY_LOUDNESS.integratedLufs), `${integratedLufs} LUFS`).toBeLessThanOrEqual(1);
    expect(truePeakDbtp).toBeLessThanOrEqual(DELIVERY_LOUDNESS.truePeakDbtp);
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'petsing-video-soundtrack-'));
    source = join(scratch, 'stereo-clip.wav');
    // Small frames: the sound is what is looked at.
    [rendering] = await Promise.all([startRenderingService({ RENDER_OUTPUT_SIZE: '128' }), writeStereoSource(source, 2.5, -30)]);
    await seedTemplates(rendering.service.context);
    owner = await createTestAccount(rendering.service.context, 'soundtrack@example.com', 2);
  }, 240_000);
  afterAll(async () => {
    await rendering?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('an uploaded stereo clip of 2.5 s at −30 LUFS: its stereo image and highs, at −14 LUFS', async () => {
    const form = new FormData();
    form.append('audio', new Blob([await readFile(source)], { type: 'audio/wav' }), 'stereo-clip.wav');
    const uploaded = await send('POST', '/v1/audio', form);
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
    const mp4 = await renderedVideo({ audio_id: uploaded.body.id });

    await expectDeliveredSound(mp4);
    const [sourceWidth, width] = await Promise.all([stereoWidthDb(source), stereoWidthDb(mp4)]);
    expect(Math.abs(width - sourceWidth), `side ${width.toFixed(1)} dB under the middle, ${sourceWidth.toFixed(1)} dB in the source`).toBeLessThan(1);
    // 8-12 kHz, which the 16 kHz analysis copy cannot hold, as strong against the whole as in the source.
    const band: [number, number] = [8_000, 12_000];
    const [sourceLevels, levels, sourceBand, videoBand] = await Promise.all([channelLevels(source), channelLevels(mp4), channelLevels(source, band), channelLevels(mp4, band)]);
    for (const channel of [0, 1]) {
      expect(Math.abs(videoBand[channel]! - levels[channel]! - (sourceBand[channel]! - sourceLevels[channel]!))).toBeLessThan(2);
    }
  }, 300_000);

  it('a template song: mixed in stereo, at −14 LUFS, and the video exactly as long as the song', async () => {
    const mp4 = await renderedVideo({ template_id: '1' });
    await expectDeliveredSound(mp4);
    // What a phone's player shows as the length (the container's) is the song's, and picture and sound end together.
    const [song] = ((await send('GET', '/templates')).body as Json[]).filter((template) => template.id === '1');
    const lengths = await durationsOf(mp4);
    for (const seconds of Object.values(lengths)) expect(Math.abs(seconds - song!.duration_seconds), JSON.stringify({ lengths, song })).toBeLessThan(0.1);
    // The chords spread across: not one signal on both channels (a mono song's difference is nothing, −Infinity dB).
    expect(await stereoWidthDb(mp4)).toBeGreaterThan(-40);
  }, 300_000);
});
