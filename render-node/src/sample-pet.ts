import sharp from 'sharp';
import { SAMPLE_PET_SIZE, samplePetSvg } from '@petsing/workflows/media';

/** The project's own sample pet (the shared drawing) as a PNG of `size`×`size` pixels. */
export async function renderSamplePet(size = SAMPLE_PET_SIZE, options: { background?: boolean } = {}): Promise<Buffer> {
  return sharp(Buffer.from(samplePetSvg(options)), { density: Math.max(72, (72 * size) / SAMPLE_PET_SIZE) })
    .resize(size, size)
    .png()
    .toBuffer();
}
