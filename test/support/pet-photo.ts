import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';

/** The real pet photos beside the project (../shared/pets), read in place. */
const SHARED_PETS = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');

/**
 * A real pet (a kitten facing the camera, ../shared/pets/cat-02.jpg) as a PNG at most `side` px a side: the photo
 * a create uploads when its face must be found. The drawn sample pet is no photo and the pet-face model refuses
 * it, as it refuses cartoons; it serves renders that are given its face (SAMPLE_PET_FACE).
 */
export async function petPhoto(side = 256): Promise<Buffer> {
  return sharp(join(SHARED_PETS, 'cat-02.jpg')).resize(side, side, { fit: 'inside' }).png().toBuffer();
}

/**
 * Where petPhoto()'s mouth is (its hand-checked landmark, as fractions of the photo): a create that gives it as
 * its `face` hint skips the photo check before the charge and goes straight to the render workflow.
 */
export const PET_PHOTO_MOUTH = (() => {
  const { mouth, width, height } = JSON.parse(readFileSync(join(SHARED_PETS, 'landmarks.json'), 'utf8'))['cat-02.jpg'] as { mouth: [number, number]; width: number; height: number };
  return { x: mouth[0] / width, y: mouth[1] / height };
})();
