import { loudLevel, pcm16MonoWavSamples, vocalActivity, type VocalActivity } from '@petsing/platform/audio';
import type { ObjectStore } from '@petsing/platform/storage';
import { STEM_SAMPLE_RATE, type PreparedStems } from './vocal-stems.ts';

/**
 * Where the vocal stem of `stems` holds a voice, measured as a render node measures it (@petsing/platform/audio): the
 * vocal stem's activity against the accompaniment's loud level (a voice alone has none). A stem that is not the
 * 16-bit mono WAV preparation writes counts as no voice.
 */
export async function voiceOfStems(objects: ObjectStore, stems: PreparedStems): Promise<VocalActivity> {
  const vocals = pcm16MonoWavSamples(await readObject(objects, stems.vocalKey), STEM_SAMPLE_RATE) ?? new Float32Array(0);
  const accompaniment = stems.accompanimentKey ? pcm16MonoWavSamples(await readObject(objects, stems.accompanimentKey), STEM_SAMPLE_RATE) : null;
  return vocalActivity(vocals, STEM_SAMPLE_RATE, accompaniment ? loudLevel(accompaniment, STEM_SAMPLE_RATE) : null);
}

async function readObject(objects: ObjectStore, key: string): Promise<Buffer> {
  const object = await objects.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
