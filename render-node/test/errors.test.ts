import { access, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { decodeAudio } from '../src/audio-decoder.ts';
import { RenderError } from '../src/errors.ts';
import { renderVideo, type RenderVideoOptions } from '../src/render-pipeline.ts';
import { run, tempDir, testLogger } from './helpers.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';

let dir: string;
let petPath: string;
let songPath: string;

beforeAll(async () => {
  dir = await tempDir('errors');
  petPath = join(dir, 'pet.png');
  songPath = join(dir, 'song.mp3');
  await writeFile(petPath, await petPhoto(512));
  await writeSyntheticSong(songPath, 6);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function renderError(overrides: Partial<RenderVideoOptions>): Promise<RenderError> {
  const error = await renderVideo({
    imagePath: petPath,
    audioPath: songPath,
    outputPath: join(dir, 'out.mp4'),
    thumbnailPath: join(dir, 'out.jpg'),
    watermark: false,
    logger: testLogger,
    ...overrides,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RenderError);
  return error as RenderError;
}

const exists = (path: string) => access(path).then(() => true, () => false);

describe('permanent errors with clear codes', () => {
  it('an audio file with no audio stream: audio_no_stream', async () => {
    const path = join(dir, 'video-only.mp4');
    await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10', '-t', '1', '-c:v', 'libx264', path]);
    const error = await renderError({ audioPath: path });
    expect([error.code, error.permanent]).toEqual(['audio_no_stream', true]);
    expect(error.hint).toMatch(/no sound track/);
  });

  it('a file that is not audio: audio_undecodable', async () => {
    const path = join(dir, 'noise.mp3');
    await writeFile(path, Buffer.alloc(4096, 7));
    const error = await renderError({ audioPath: path });
    expect([error.code, error.permanent]).toEqual(['audio_undecodable', true]);
  });

  it('a photo with no usable face region: face_not_found with an honest hint', async () => {
    const path = join(dir, 'landscape.png');
    const sharp = (await import('sharp')).default;
    await sharp(
      Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480">
        <rect width="640" height="260" fill="#8fb8e0"/><rect y="260" width="640" height="220" fill="#4f8a3a"/></svg>`),
    )
      .png()
      .toFile(path);
    const error = await renderError({ imagePath: path });
    expect([error.code, error.permanent]).toEqual(['face_not_found', true]);
    expect(error.hint).toMatch(/hard case/);
    expect(await exists(join(dir, 'out.mp4'))).toBe(false);
  });

  it('a truncated photo: image_undecodable', async () => {
    const sharp = (await import('sharp')).default;
    const jpeg = await sharp(await petPhoto(256)).jpeg().toBuffer();
    const path = join(dir, 'half.jpg');
    await writeFile(path, jpeg.subarray(0, jpeg.length - 400));
    const error = await renderError({ imagePath: path });
    expect([error.code, error.permanent]).toEqual(['image_undecodable', true]);
  });

  it('decodes real audio to 16 kHz mono', async () => {
    const audio = await decodeAudio(songPath);
    expect(audio.sampleRate).toBe(16000);
    expect(Math.abs(audio.durationSeconds - 6)).toBeLessThan(0.06);
  });
});

describe('cancellation', () => {
  it('stops on abort and removes its partial outputs', async () => {
    const controller = new AbortController();
    const outputPath = join(dir, 'cancelled.mp4');
    const thumbnailPath = join(dir, 'cancelled.jpg');
    const error = await renderError({
      outputPath,
      thumbnailPath,
      signal: controller.signal,
      onProgress: (percent) => {
        if (percent >= 40) controller.abort();
      },
    });
    expect([error.code, error.permanent]).toEqual(['aborted', false]);
    expect(await exists(outputPath)).toBe(false);
    expect(await exists(thumbnailPath)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.startsWith('cancelled'))).toEqual([]);
  });
});

describe('template previews', () => {
  it('renders the template song over the sample pet, without a watermark', async () => {
    const { renderTemplatePreview } = await import('../src/template-preview.ts');
    const outputPath = join(dir, 'preview.mp4');
    const result = await renderTemplatePreview({ audioPath: songPath, outputPath, thumbnailPath: join(dir, 'preview.jpg'), width: 256, logger: testLogger });
    expect([result.frames, result.width, result.height, result.renderer]).toEqual([150, 256, 256, 'face-rig']);
    // The sample pet's known landmarks are used as given (no detection involved).
    expect(result.face.method).toBe('given by the person');
    expect(await exists(outputPath)).toBe(true);
    expect(await exists(join(dir, 'preview.jpg'))).toBe(true);
  });
});

describe('awkward framing', () => {
  it('animates a pet whose chin is cut off by the photo', async () => {
    const sharp = (await import('sharp')).default;
    // A wide close-up of a real kitten: the photo ends 10 px below its mouth, above its chin (annotated 15 px below).
    const path = join(dir, 'chin-cut.png');
    await sharp(await petPhoto(512)).extract({ left: 0, top: 40, width: 512, height: 206 }).png().toFile(path);
    const outputPath = join(dir, 'chin-cut.mp4');
    const result = await renderVideo({ imagePath: path, audioPath: songPath, outputPath, thumbnailPath: join(dir, 'chin-cut.jpg'), watermark: false, width: 256, logger: testLogger });
    // The square stays inside the photo (as close to the face as the photo allows: the chin's margin is past its edge).
    const { left, top, width, height } = result.framing;
    expect(width).toBe(height);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(top + height, JSON.stringify(result.framing)).toBeLessThanOrEqual(206);
    expect(left + width).toBeLessThanOrEqual(512);
    expect(height, JSON.stringify(result.framing)).toBeGreaterThan(180);
    expect(await exists(outputPath)).toBe(true);
  });
});
