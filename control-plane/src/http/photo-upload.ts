import type { Request } from 'express';
import { PHOTO_UPLOAD } from '@petsing/workflows/api-rules';
import { AppError } from '../errors/app-error.ts';
import { assertImageHeader } from '../media/image-upload.ts';
import type { LocalUpload } from '../media/uploads.ts';
import { readMultipart, type MultipartForm, type UploadRule } from './multipart.ts';

/** The pet photo of uploads, by the limits the web app shows (PHOTO_UPLOAD): HEIC (accepted from image URLs) is not, since browsers cannot show it. */
export const IMAGE_UPLOAD: UploadRule = {
  sniff: 'image',
  accept: PHOTO_UPLOAD.formats,
  maxBytes: PHOTO_UPLOAD.maxBytes,
  refusal: { code: 'unsupported_image_format', formats: PHOTO_UPLOAD.formatNames },
};

/** The form's `image` file, an image by its header; the check's render node decodes it completely (and refuses a truncated one). */
function requiredImage(form: MultipartForm): Promise<LocalUpload> {
  const image = form.files.image;
  if (!image) throw new AppError('invalid_request', 'The form needs an "image" file.');
  return assertImageHeader(image.path).then(() => image);
}

/** POST /v1/images and POST /images: a form with one `image` file to check, handed to `use` and removed afterwards. */
export async function withUploadedPhoto<T>(req: Request, use: (photo: LocalUpload) => Promise<T>): Promise<T> {
  const form = await readMultipart(req, { files: { image: IMAGE_UPLOAD }, fields: [] });
  try {
    return await use(await requiredImage(form));
  } finally {
    await form.cleanup();
  }
}
