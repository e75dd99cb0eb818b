/** `missing`: never started, or its history is past the namespace's retention. */
export type WorkflowState = 'running' | 'ended' | 'missing';

/**
 * Starts and cancels the durable work of a video (temporal/render-scheduler.ts does it with Temporal
 * workflows). Every start is idempotent: the workflow id is the video's (or the template's).
 */
export interface RenderScheduling {
  /**
   * Whether the render queue (Temporal) answers now, within a couple of seconds: a create asks before it charges
   * anything, so that an outage refuses it with nothing in the ledger.
   */
  reachable(): Promise<boolean>;
  /** Starts the video's render and answers its workflow id. */
  startRender(videoId: string): Promise<string>;
  /** Starts the timer that cancels the video if it has not completed `deadlineSeconds` from now. */
  startDeadline(videoId: string, deadlineSeconds: number): Promise<void>;
  /** Starts (or joins) the watermark-removal re-render and answers its workflow id. */
  startRerender(videoId: string): Promise<string>;
  startTemplatePreview(templateId: number): Promise<void>;
  renderState(videoId: string): Promise<WorkflowState>;
  rerenderState(videoId: string): Promise<WorkflowState>;
  /** Cancels whatever is rendering the video; finished or unknown work is fine. */
  cancel(videoId: string): Promise<void>;
}
