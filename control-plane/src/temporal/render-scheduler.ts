import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  renderWorkflowId,
  rerenderWorkflowId,
  TASK_QUEUES,
  templatePreviewWorkflowId,
  videoDeadlineWorkflowId,
  type RenderVideoInput,
  type VideoDeadlineInput,
} from '@petsing/workflows';
import type { RenderScheduling, WorkflowState } from '../services/ports/render-scheduling.ts';
import { TEMPLATE_ASSETS_VERSION } from '../templates/template-objects.ts';

/** How long `reachable` waits for Temporal (connecting first, if this process has not yet) before it says no. */
const REACHABLE_WITHIN_MS = 2_000;

/** The control plane's adapter to Temporal: starts and cancels the workflows of a video. */
export class RenderScheduler implements RenderScheduling {
  constructor(private readonly client: () => Promise<Client>) {}

  /** Asks the frontend for its system info (the cheapest call it answers), connecting first if need be. */
  async reachable(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const answered = (async () => {
      const client = await this.client();
      await client.connection.withDeadline(Date.now() + REACHABLE_WITHIN_MS, () => client.workflowService.getSystemInfo({}));
      return true;
    })();
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), REACHABLE_WITHIN_MS)));
    try {
      return await Promise.race([answered, late]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      answered.catch(() => {});
    }
  }

  /** Starts the video's render; starting it twice is a no-op (the workflow id is the video's). */
  async startRender(videoId: string): Promise<string> {
    const workflowId = renderWorkflowId(videoId);
    const input: RenderVideoInput = { videoId };
    try {
      await (await this.client()).workflow.start('renderVideo', {
        taskQueue: TASK_QUEUES.control,
        workflowId,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    return workflowId;
  }

  /**
   * Starts the timer that cancels the video if it has not completed `deadlineSeconds` after now; a Temporal
   * timer, so it survives restarts of every process. Starting it twice is a no-op.
   */
  async startDeadline(videoId: string, deadlineSeconds: number): Promise<void> {
    const input: VideoDeadlineInput = { videoId, deadlineSeconds };
    try {
      await (await this.client()).workflow.start('enforceVideoDeadline', {
        taskQueue: TASK_QUEUES.control,
        workflowId: videoDeadlineWorkflowId(videoId),
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Starts (or joins, if one is running) the watermark-removal re-render of a video. */
  async startRerender(videoId: string): Promise<string> {
    const workflowId = rerenderWorkflowId(videoId);
    await (await this.client()).workflow.start('rerenderWithoutWatermark', {
      taskQueue: TASK_QUEUES.control,
      workflowId,
      args: [{ videoId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    return workflowId;
  }

  /** Renders a template's preview clip; a no-op while one runs or once one has succeeded. */
  async startTemplatePreview(templateId: number): Promise<void> {
    try {
      await (await this.client()).workflow.start('renderTemplatePreview', {
        taskQueue: TASK_QUEUES.control,
        workflowId: templatePreviewWorkflowId(templateId, TEMPLATE_ASSETS_VERSION),
        args: [{ templateId }],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Whether the video's render (or its re-render) workflow runs, has ended, or was never started. */
  renderState(videoId: string): Promise<WorkflowState> {
    return this.workflowState(renderWorkflowId(videoId));
  }

  rerenderState(videoId: string): Promise<WorkflowState> {
    return this.workflowState(rerenderWorkflowId(videoId));
  }

  /** Cancels whatever is rendering the video; finished or unknown workflows are fine. */
  async cancel(videoId: string): Promise<void> {
    const client = await this.client();
    for (const workflowId of [renderWorkflowId(videoId), rerenderWorkflowId(videoId)]) {
      try {
        await client.workflow.getHandle(workflowId).cancel();
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
  }

  private async workflowState(workflowId: string): Promise<WorkflowState> {
    try {
      const { status } = await (await this.client()).workflow.getHandle(workflowId).describe();
      return status.name === 'RUNNING' ? 'running' : 'ended';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'missing';
      throw error;
    }
  }
}
