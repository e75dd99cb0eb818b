import { setTimeout as sleep } from 'node:timers/promises';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { DetectFaceResult, detectFaceWorkflowId, FAILURE_TYPES, TASK_QUEUES, type DetectFaceInput } from '@petsing/workflows';
import { FaceDetectionUnavailable, PhotoUnreadable, type FaceDetection } from '../services/ports/face-detection.ts';

/** The render node's codes for a photo it cannot take (render-node/src/errors.ts); its messages for them are its own sentences. */
const PHOTO_REFUSALS: ReadonlySet<string> = new Set(['image_undecodable', 'image_too_large']);

/** A workflow whose caller stopped waiting is ended by the server after this long, whoever was meant to end it. */
const WORKFLOW_EXECUTION_TIMEOUT = '2 minutes';

/**
 * The control plane's way to the detector, which lives on the render nodes: it starts the short detectFace
 * workflow and waits for its answer, so the API process never loads render-node code.
 */
export class FaceDetectionClient implements FaceDetection {
  constructor(
    private readonly client: () => Promise<Client>,
    private readonly timeoutMs: number,
  ) {}

  async detect(imageId: string, imageKey: string): Promise<DetectFaceResult> {
    const handle = await this.start(imageId, { imageKey });
    const gaveUp = new AbortController();
    try {
      const result = await Promise.race([
        handle.result(),
        sleep(this.timeoutMs, undefined, { signal: gaveUp.signal }).then(() => {
          throw new FaceDetectionUnavailable(`No render node checked the photo within ${this.timeoutMs / 1000} s.`);
        }),
      ]);
      return DetectFaceResult.parse(result);
    } catch (error) {
      if (error instanceof FaceDetectionUnavailable) {
        // Nobody waits for the answer any more; a late one would only hold a render slot.
        await handle.terminate('the caller stopped waiting').catch(() => {});
        throw error;
      }
      const cause = error instanceof WorkflowFailedError && error.cause instanceof ActivityFailure ? error.cause.cause : undefined;
      const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as { code?: unknown; hint?: unknown } | undefined) : undefined;
      // Only a refusal of the photo itself is the client's to read: a node's model failure is permanent too, and its
      // message names files on the node.
      if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.permanent && PHOTO_REFUSALS.has(String(details?.code))) {
        throw new PhotoUnreadable(cause.message, typeof details?.hint === 'string' ? details.hint : undefined);
      }
      throw new FaceDetectionUnavailable('The face check failed.', { cause: error });
    } finally {
      gaveUp.abort();
    }
  }

  private async start(imageId: string, input: DetectFaceInput) {
    try {
      return await (await this.client()).workflow.start('detectFace', {
        taskQueue: TASK_QUEUES.control,
        workflowId: detectFaceWorkflowId(imageId),
        args: [input],
        workflowExecutionTimeout: WORKFLOW_EXECUTION_TIMEOUT,
      });
    } catch (error) {
      throw new FaceDetectionUnavailable('The face check could not be started.', { cause: error });
    }
  }
}
