import { FaceHints, FoundFace } from '@petsing/workflows';
import { z } from 'zod';

/** Named in every refusal of a malformed `face`, on every surface. */
export const FACE_HINT =
  'face is {"mouth":{"x","y"}} with optional "nose" and "chin" points, "eyes" (two points, left then right in the image) and "species" '
  + '(dog, cat, bird, rabbit, hamster or guinea_pig: the kind of mouth drawn); '
  + 'x and y are fractions from 0 to 1 of the photo\'s width and height, measured after EXIF orientation, e.g. {"mouth":{"x":0.52,"y":0.71}}.';

export const FaceHintsField = FaceHints.meta({
  id: 'FaceHints',
  description:
    'Where the pet\'s face is, when detection misses it or to correct it: points as fractions (0-1) of the photo\'s width (x) and '
    + 'height (y) after EXIF orientation. The render uses every given point exactly; the pet-face model finds the rest around the '
    + 'given mouth; `species` chooses the mouth drawn (a muzzle for dogs and cats, a beak for birds, a small rodent mouth with '
    + 'incisors for rabbits, hamsters and guinea pigs) over the species the model named. Optional.',
  example: { mouth: { x: 0.52, y: 0.71 } },
});

export const ApiImage = z
  .object({
    id: z.uuid().meta({ description: 'Pass as image_id to POST /v1/videos (or the web create endpoints) until expires_at.' }),
    width: z.number().int().meta({ description: 'Width in pixels after EXIF orientation.' }),
    height: z.number().int().meta({ description: 'Height in pixels after EXIF orientation.' }),
    face: FoundFace.meta({
      id: 'FoundFace',
      description:
        'The landmarks found, as fractions of width and height (estimated points may lie slightly outside 0-1); eyes left then right '
        + 'in the image (a profile\'s far eye is estimated); for birds nose is the beak tip; mouth_corners null when not visible; head is '
        + 'the head\'s box; species, view and mouth_open as the pet-face model sees them (absent from a custom detector); framing is '
        + '"small-face" when the pet is too small in the photo to fill a video\'s frame without enlarging it more than twice.',
    })
      .nullable()
      .meta({ description: 'null: no supported pet (dog, cat, bird, rabbit, hamster, guinea pig) was found, so a create from this photo needs face.mouth.' }),
    expires_at: z.iso.datetime().meta({ description: 'The photo is deleted after this (24 hours after it was sent).' }),
  })
  .meta({ id: 'ApiImage' });

export const CheckImageUrlRequest = z
  .object({
    image_url: z.url().max(2048).meta({ description: 'Public HTTPS URL of the pet photo (JPEG, PNG, WebP or HEIC, up to 15 MB).' }),
  })
  .meta({ id: 'CheckImageUrlRequest' });

export const CheckImageForm = z
  .object({
    image: z.string().meta({ format: 'binary', description: 'The pet photo: PNG, JPEG or WebP, at most 15 MB (the format is read from the bytes).' }),
  })
  .meta({ id: 'CheckImageForm' });
