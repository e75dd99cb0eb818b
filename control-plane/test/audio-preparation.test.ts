import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '@petsing/platform/storage';
import { DELIVERY_LOUDNESS } from '@petsing/workflows/media';
import { AudioPreparer } from '../src/media/audio-preparer.ts';
import { encodeWav } from '../src/templates/melody-synth.ts';
import { audioStreamsOf, channelLevels, delayMs, loudnessOf, stereoWidthDb, writeMonoSource, writeNoiseBursts, writeStereoSource } from '../../test/support/soundtrack.ts';

/**
 * Issue 35: the video's soundtrack is made at the source's quality and a measured loudness. Every clip length a video
 * takes (2 to 30 s), from a quiet source (−30 LUFS, drum hits far above its loudness) and a hot one (clipping at 0 dBFS).
 */
const LENGTHS = [2, 3, 10, 30];
const SOURCES = { quiet: -30, hot: -6 } as const;
const CASES = LENGTHS.flatMap((seconds) => Object.keys(SOURCES).map((kind) => ({ kind: kind as keyof typeof SOURCES, seconds })));
/** What "−14 LUFS" allows, as the issue states it. */
const LOUDNESS_TOLERANCE = 1;
/** The analysis copy's level (what the render node's mouth analysis was tuned at). */
const ANALYSIS_LUFS = -16;
const silentWav = (seconds: number) => encodeWav([new Float32Array(44_100 * seconds), new Float32Array(44_100 * seconds)], 44_100);

describe('audio preparation: the analysis copy and the soundtrack', () => {
  let scratch: string;
  let objects: LocalObjectStore;
  const name = (kind: string, seconds: number) => `${kind}-${seconds}s`;
  /** The files of one case: its source, and what preparation stored. */
  const files = (id: string) => ({ source: join(scratch, `${id}.wav`), analysis: join(scratch, `${id}-analysis.wav`), delivery: join(scratch, `${id}-delivery.m4a`) });
  const prepared = new Map<string, number>();

  const fetchObject = async (key: string, path: string) => pipeline((await objects.get(key)).body, createWriteStream(path));
  /** Stores the source, prepares it with both copies and fetches them beside it; answers the reported length. */
  const prepare = async (preparer: AudioPreparer, id: string) => {
    const paths = files(id);
    await objects.put(`${id}/source`, await readFile(paths.source), { contentType: 'audio/wav' });
    const { durationSeconds } = await preparer.prepare(`${id}/source`, { analysisKey: `${id}/analysis.wav`, deliveryKey: `${id}/delivery.m4a` });
    await fetchObject(`${id}/analysis.wav`, paths.analysis);
    await fetchObject(`${id}/delivery.m4a`, paths.delivery);
    prepared.set(id, durationSeconds);
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'petsing-audio-preparation-'));
    objects = new LocalObjectStore({ root: join(scratch, 'objects'), publicBaseUrl: 'http://127.0.0.1', signingSecret: 'a-signing-secret-for-tests' });
    await Promise.all([
      ...CASES.map(({ kind, seconds }) => writeStereoSource(files(name(kind, seconds)).source, seconds, SOURCES[kind])),
      writeMonoSource(files('mono').source, 3, -24),
    ]);
    const preparer = new AudioPreparer(objects, 2);
    await Promise.all([...CASES.map(({ kind, seconds }) => prepare(preparer, name(kind, seconds))), prepare(preparer, 'mono')]);
  }, 240_000);
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('makes sources as the issue describes them: one quiet at −30 LUFS, one hot, clipping at 0 dBFS', async () => {
    const quiet = await loudnessOf(files(name('quiet', 10)).source);
    expect(quiet.integratedLufs).toBeCloseTo(-30, 0);
    const hot = await loudnessOf(files(name('hot', 10)).source);
    // Clipped at full scale as stored: its true peak (between the samples) is over it.
    expect(hot.truePeakDbtp).toBeGreaterThanOrEqual(0);
    expect(hot.integratedLufs).toBeGreaterThan(-8);
  });

  it.each(CASES)('$kind source, $seconds s: a stereo 48 kHz AAC soundtrack of 192 kb/s as long as the source', async ({ kind, seconds }) => {
    const id = name(kind, seconds);
    const [stream] = await audioStreamsOf(files(id).delivery);
    expect(stream).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 2 });
    expect(stream!.bitRate).toBeGreaterThanOrEqual(160_000);
    expect(Math.abs(stream!.seconds - seconds)).toBeLessThan(0.03);
    expect(prepared.get(id)).toBeCloseTo(seconds, 1);
  });

  it.each(CASES)('$kind source, $seconds s: −14 LUFS integrated, true peak at most −1 dBTP, measured', async ({ kind, seconds }) => {
    const { integratedLufs, truePeakDbtp } = await loudnessOf(files(name(kind, seconds)).delivery);
    expect(Math.abs(integratedLufs - DELIVERY_LOUDNESS.integratedLufs), `${integratedLufs} LUFS`).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
    expect(truePeakDbtp).toBeLessThanOrEqual(DELIVERY_LOUDNESS.truePeakDbtp);
  });

  it.each(CASES)('$kind source, $seconds s: keeps the stereo image and the highs', async ({ kind, seconds }) => {
    const { source, delivery } = files(name(kind, seconds));
    // The channels stay as different, in the same balance.
    const [sourceWidth, width] = await Promise.all([stereoWidthDb(source), stereoWidthDb(delivery)]);
    expect(Math.abs(width - sourceWidth), `side ${width.toFixed(1)} dB under the middle, ${sourceWidth.toFixed(1)} dB in the source`).toBeLessThan(1);
    const [sourceLeft, sourceRight] = await channelLevels(source);
    const [left, right] = await channelLevels(delivery);
    expect(Math.abs(left! - right! - (sourceLeft! - sourceRight!))).toBeLessThan(1);
    // 8-12 kHz, above anything a 16 kHz copy can hold: as strong against the whole as in the source.
    const band: [number, number] = [8_000, 12_000];
    const [sourceBand, deliveryBand] = await Promise.all([channelLevels(source, band), channelLevels(delivery, band)]);
    for (const channel of [0, 1]) {
      expect(Math.abs(deliveryBand[channel]! - [left!, right!][channel]! - (sourceBand[channel]! - [sourceLeft!, sourceRight!][channel]!))).toBeLessThan(2);
    }
  });

  it.each(CASES.filter(({ seconds }) => seconds === 10))('$kind source, $seconds s: both copies play in time with the source (the mouth follows one, the ear hears the other)', async ({ kind, seconds }) => {
    const { source, analysis, delivery } = files(name(kind, seconds));
    expect(await delayMs(source, delivery)).toBe(0);
    expect(Math.abs(await delayMs(source, analysis))).toBeLessThanOrEqual(0.1);
  });

  it.each(CASES)('$kind source, $seconds s: the analysis copy stays mono 16 kHz, at a measured −16 LUFS', async ({ kind, seconds }) => {
    const { analysis } = files(name(kind, seconds));
    const [stream] = await audioStreamsOf(analysis);
    expect(stream).toMatchObject({ sampleRate: 16_000, channels: 1 });
    const { integratedLufs } = await loudnessOf(analysis);
    expect(Math.abs(integratedLufs - ANALYSIS_LUFS), `${integratedLufs} LUFS`).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
  });

  it('writes again a soundtrack whose AAC went over −1 dBTP (hard-switched noise bursts), until it is under', async () => {
    const id = 'bursts';
    await writeNoiseBursts(files(id).source, 3, -20);
    await prepare(new AudioPreparer(objects, 1), id);
    const { integratedLufs, truePeakDbtp } = await loudnessOf(files(id).delivery);
    expect(truePeakDbtp).toBeLessThanOrEqual(DELIVERY_LOUDNESS.truePeakDbtp);
    // The limiter's lower ceiling costs loudness on such a sound, not more than a few LU.
    expect(integratedLufs).toBeGreaterThan(DELIVERY_LOUDNESS.integratedLufs - 5);
  });

  it('prepares silence as silence: no gain from nothing, no error', async () => {
    const id = 'silence';
    await objects.put(`${id}/source`, await silentWav(3), { contentType: 'audio/wav' });
    const preparer = new AudioPreparer(objects, 1);
    const { durationSeconds } = await preparer.prepare(`${id}/source`, { analysisKey: `${id}/analysis.wav`, deliveryKey: `${id}/delivery.m4a` });
    expect(durationSeconds).toBeCloseTo(3, 1);
    await fetchObject(`${id}/delivery.m4a`, files(id).delivery);
    expect((await loudnessOf(files(id).delivery)).truePeakDbtp).toBe(-Infinity);
  });

  it('plays a mono source on both channels alike, at the same loudness', async () => {
    const { delivery } = files('mono');
    const [stream] = await audioStreamsOf(delivery);
    expect(stream).toMatchObject({ codec: 'aac', sampleRate: 48_000, channels: 2 });
    // The same signal on both (AAC codes them alike to within about −45 dB).
    expect(await stereoWidthDb(delivery)).toBeLessThan(-40);
    const { integratedLufs, truePeakDbtp } = await loudnessOf(delivery);
    expect(Math.abs(integratedLufs - DELIVERY_LOUDNESS.integratedLufs)).toBeLessThanOrEqual(LOUDNESS_TOLERANCE);
    expect(truePeakDbtp).toBeLessThanOrEqual(DELIVERY_LOUDNESS.truePeakDbtp);
  });
});
