import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_AUDIO_ENCODING, SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { renderVideo } from '../src/render-pipeline.ts';
import { renderSamplePet } from '../src/sample-pet.ts';
import { audioStreamsOf, writeStereoSource } from '../../test/support/soundtrack.ts';
import { run, tempDir, testLogger } from './helpers.ts';

/**
 * Issue 35: the MP4's sound is the prepared soundtrack (stereo 48 kHz AAC), copied as it is (one lossy encode in all);
 * a render planned before soundtracks existed encodes the analysis copy, at the same AAC settings.
 */
const SECONDS = 2;
const WIDTH = 128;

/** An MD5 of the audio stream's packets: equal only for the same encoded bytes. */
async function audioPacketsMd5(path: string): Promise<string> {
  const { stdout } = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', path, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', '-']);
  return stdout.trim();
}

describe('the soundtrack of a render', () => {
  let dir: string;
  /** A file of this test's folder. */
  const at = (name: string) => join(dir, name);

  beforeAll(async () => {
    dir = await tempDir('soundtrack');
    await writeFile(at('pet.png'), await renderSamplePet(512));
    await writeStereoSource(at('source.wav'), SECONDS, -14);
    // As audio preparation makes them: the mono 16 kHz analysis copy and the stereo AAC soundtrack.
    await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', at('source.wav'), '-ac', '1', '-ar', '16000', '-c:a', 'pcm_f32le', at('analysis.wav')]);
    await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', at('source.wav'), '-ac', '2', ...DELIVERY_AUDIO_ENCODING, '-f', 'mp4', at('soundtrack.m4a')]);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const render = (name: string, soundtrack?: string) => {
    const outputPath = at(`${name}.mp4`);
    return renderVideo({
      imagePath: at('pet.png'),
      audioPath: at('analysis.wav'),
      ...(soundtrack ? { soundtrackPath: soundtrack } : {}),
      outputPath,
      thumbnailPath: at(`${name}.jpg`),
      watermark: false,
      width: WIDTH,
      faceHints: SAMPLE_PET_FACE,
      rigThreads: 0,
      logger: testLogger,
    }).then((result) => ({ result, outputPath }));
  };

  it('copies the prepared soundtrack into the MP4: stereo, 48 kHz, 192 kb/s, the same AAC bytes, as long as the video', async () => {
    const { result, outputPath } = await render('with-soundtrack', at('soundtrack.m4a'));
    const [stream] = await audioStreamsOf(outputPath);
    expect(stream).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 2 });
    expect(stream!.bitRate).toBeGreaterThanOrEqual(160_000);
    expect(await audioPacketsMd5(outputPath)).toBe(await audioPacketsMd5(at('soundtrack.m4a')));
    expect(Math.abs(stream!.seconds - result.durationSeconds)).toBeLessThan(0.03);
  });

  it('encodes the analysis copy when a render has no soundtrack (planned before there were any): AAC at 48 kHz', async () => {
    const { outputPath } = await render('without-soundtrack');
    const [stream] = await audioStreamsOf(outputPath);
    expect(stream).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 1 });
  });
});
