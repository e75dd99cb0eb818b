import { join } from 'node:path';
import sharp from 'sharp';

/** The real pet photos beside the project (../shared/pets), read in place. */
export const SHARED_PETS = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');

/**
 * A real pet (a kitten facing the camera, ../shared/pets/cat-02.jpg) as a PNG at most `side` px a side: the photo
 * a create uploads when its face must be found. The drawn sample pet is no photo and the pet-face model refuses
 * it, as it refuses cartoons; it serves renders that are given its face (SAMPLE_PET_FACE).
 */
export async function petPhoto(side = 256): Promise<Buffer> {
  return sharp(join(SHARED_PETS, 'cat-02.jpg')).resize(side, side, { fit: 'inside' }).png().toBuffer();
}
