/**
 * Where the renderer hangs the mouth, in pixels of the output frame: derived from the face landmarks.
 * `upperLipY` is where a generated mouth hangs from; `faceWidth` sets the crop scale.
 */
export interface MouthRegion {
  centreX: number;
  upperLipY: number;
  faceWidth: number;
  /** The head box, used to frame the output. */
  subject: { left: number; top: number; width: number; height: number };
  /** 0-1, from the detector (1 for a face the person pointed at). */
  confidence: number;
  method: string;
}
