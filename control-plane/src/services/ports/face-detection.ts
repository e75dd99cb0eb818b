import type { DetectFaceResult } from '@petsing/workflows';

/** Finds the pet's face in a stored photo (temporal/face-detection.ts asks a render node through Temporal). */
export interface FaceDetection {
  detect(imageId: string, imageKey: string): Promise<DetectFaceResult>;
}

/** No render node answered in time (none running, all busy) or Temporal is unreachable. */
export class FaceDetectionUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FaceDetectionUnavailable';
  }
}

/** The render node could not read the photo: a retry will not help. */
export class PhotoUnreadable extends Error {
  constructor(message: string, readonly hint: string | undefined) {
    super(message);
    this.name = 'PhotoUnreadable';
  }
}
