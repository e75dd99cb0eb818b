import { randomUUID } from 'node:crypto';
import type { FaceHints, PhotoCheck } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/platform/storage';
import type { Image } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { ImageUrlImporter } from '../media/image-url-importer.ts';
import type { ImageRepository } from '../repositories/image.repository.ts';
import { FaceDetectionUnavailable, PhotoUnreadable, type FaceDetection } from './ports/face-detection.ts';
import { fileUpload, type LocalUpload, type MediaUpload } from '../media/uploads.ts';
import { removeExpiredMedia } from './expired-media-sweep.ts';

/** How long a checked photo is kept for creates by image_id (the issue asks for at least 24 h). */
const IMAGE_RETENTION_MS = 24 * 3600 * 1000;
/** Told to a caller whose photo could not be checked: a render node usually frees up within this long. */
const DETECTION_RETRY_AFTER_SECONDS = 30;

const imageObjectKey = (id: string, extension: string) => `images/${id}.${extension}`;

/**
 * Photos checked before anyone pays: stored under images/, their face found by a render node (through the
 * detectFace workflow), kept IMAGE_RETENTION_MS for creates by image_id, then swept.
 */
export class ImageService {
  private readonly images: ImageRepository;
  private readonly objects: ObjectStore;
  private readonly detector: FaceDetection;
  private readonly imageUrls: ImageUrlImporter;
  private readonly logger: Logger;

  constructor(dependencies: {
    images: ImageRepository;
    objects: ObjectStore;
    detector: FaceDetection;
    imageUrls: ImageUrlImporter;
    logger: Logger;
  }) {
    ({ images: this.images, objects: this.objects, detector: this.detector, imageUrls: this.imageUrls, logger: this.logger } = dependencies);
  }

  /** POST /v1/images with image_url: downloaded through the same vetting and limits as a create's image_url, then checked. */
  async checkUrl(userId: string, url: string): Promise<Image> {
    return this.check(userId, await this.imageUrls.download(url));
  }

  /** POST /images, POST /v1/images with a file, and web creates without a mouth hint: an uploaded photo, checked. */
  checkUpload(userId: string, file: LocalUpload): Promise<Image> {
    return this.check(userId, fileUpload(file));
  }

  /** Stores a photo, has a render node find its face, and records both; nothing is kept when the check fails. */
  private async check(userId: string, photo: MediaUpload): Promise<Image> {
    const id = randomUUID();
    const key = imageObjectKey(id, photo.extension);
    await this.objects.put(key, photo.body, { contentType: photo.contentType });
    try {
      const found = await this.detect(id, key);
      return await this.images.insert({
        id,
        user_id: userId,
        object_key: key,
        width: found.width,
        height: found.height,
        face: found.face,
        // The finder's version travels with the face: a render uses this face only on the same finder.
        face_model: found.model ?? null,
        expires_at: new Date(Date.now() + IMAGE_RETENTION_MS),
      });
    } catch (error) {
      await this.objects.delete(key).catch(() => {});
      throw error;
    }
  }

  /** The caller's unexpired photo; another user's, an expired or an unknown id are all unknown_image. */
  async usable(userId: string, imageId: string, now = new Date()): Promise<Image> {
    const image = await this.images.findUsable(imageId, userId, now);
    if (!image) throw new AppError('unknown_image', `There is no image ${imageId} for this account, or it has expired.`);
    return image;
  }

  /** A held photo renders only with a face: found by the check, or pointed at by the person. */
  assertRenderable(image: Image, face: FaceHints | undefined): void {
    if (image.face === null && !face) {
      throw new AppError('face_not_found', `No pet face was found on image ${image.id}, and no face.mouth was given; nothing was charged.`, {
        details: { image_id: image.id },
      });
    }
  }

  /** What the check found and the owner was shown, as a video made from the photo keeps it (RenderPlan.photoCheck). */
  photoCheckOf(image: Image): PhotoCheck {
    return { face: image.face, ...(image.face_model ? { model: image.face_model } : {}) };
  }

  /** Removes expired photos; returns how many (startExpiredMediaSweep runs it hourly in the control worker). */
  sweepExpired(now = new Date()): Promise<number> {
    return removeExpiredMedia(this.images, this.objects, now);
  }

  private async detect(id: string, key: string) {
    try {
      return await this.detector.detect(id, key);
    } catch (error) {
      if (error instanceof PhotoUnreadable) {
        throw new AppError('unsupported_image_format', `The photo could not be read: ${error.message}`, error.hint ? { hint: error.hint } : {});
      }
      if (error instanceof FaceDetectionUnavailable) {
        this.logger.warn({ err: error, imageId: id }, 'face check unavailable');
        throw new AppError('face_detection_unavailable', `${error.message} Nothing was stored or charged.`, {
          headers: { 'Retry-After': String(DETECTION_RETRY_AFTER_SECONDS) },
          cause: error,
        });
      }
      throw error;
    }
  }
}
