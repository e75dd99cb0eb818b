import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ActivityFailure, ApplicationFailure, Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNamespace } from '../../test/support/temporal.ts';
import { parseContract, parsedActivities } from '../src/contract-parsing.ts';
import { FAILURE_TYPES, renderActivitySchemas, RenderVideoInput, type RenderActivities, type RenderLipSyncInput } from '../src/contract.ts';

const lipSyncInput: RenderLipSyncInput = {
  jobId: 'job',
  workflowId: 'workflow',
  imageKey: 'videos/v/image.png',
  audioKey: 'videos/v/audio.wav',
  watermark: true,
  outputKey: 'videos/v/video.mp4',
  thumbnailKey: 'videos/v/thumbnail.jpg',
};
const lipSyncResult = { outputKey: lipSyncInput.outputKey, thumbnailKey: lipSyncInput.thumbnailKey, durationSeconds: 3, frames: 75 };

/** The ContractViolation a call failed with, from the activity or the workflow. */
function violationOf(error: unknown): ApplicationFailure {
  let cause = error instanceof WorkflowFailedError ? error.cause : error;
  if (cause instanceof ActivityFailure) cause = cause.cause;
  if (!(cause instanceof ApplicationFailure)) throw new Error(`not an ApplicationFailure: ${String(error)}`, { cause: error });
  return cause;
}

describe('the contract parsed where it is received', () => {
  it('names each field a value breaks, as a non-retryable ContractViolation', () => {
    let thrown: unknown;
    try {
      parseContract(RenderVideoInput, { videoId: 'not-a-uuid' }, 'The input of renderVideo');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: FAILURE_TYPES.contract, nonRetryable: true, message: expect.stringMatching(/^The input of renderVideo breaks the contract: videoId: /) });
    expect((thrown as ApplicationFailure).details).toEqual([{ problems: [{ field: 'videoId', message: expect.any(String) }] }]);
    expect(parseContract(RenderVideoInput, { videoId: '9b2f6c1e-4a8d-4f3b-9c2e-1d5a7b3c8e4f', extra: 1 }, 'x')).toEqual({ videoId: '9b2f6c1e-4a8d-4f3b-9c2e-1d5a7b3c8e4f' });
  });

  it('serves only activities that have a schema', () => {
    const implementations = { renderLipSync: async () => lipSyncResult, detectFace: async () => ({ width: 1, height: 1, face: null }), unlisted: async () => undefined };
    expect(() => parsedActivities(renderActivitySchemas, implementations)).toThrow('The activity unlisted has no schema in the contract.');
  });

  describe('through Temporal (dev server, real worker and workflow sandbox)', () => {
    let client: Client;
    let connection: Connection;
    let worker: Worker;
    let running: Promise<void>;
    const taskQueue = `contract-${randomUUID()}`;
    /** What the renderLipSync implementation received, and how often the worker ran the activity. */
    const received: unknown[] = [];
    let attempts = 0;

    beforeAll(async () => {
      const { address, namespace } = await createTestNamespace();
      const parsed = parsedActivities(renderActivitySchemas, {
        renderLipSync: async (input) => {
          received.push(input);
          return lipSyncResult;
        },
        detectFace: async () => ({ width: 1, height: 1, face: null }),
      });
      const activities: RenderActivities = {
        renderLipSync: (input) => {
          attempts++;
          return parsed.renderLipSync(input);
        },
        // Served unparsed, answering a result that breaks DetectFaceResult (a width of 0): the workflow must refuse it.
        detectFace: async () => ({ width: 0, height: 10, face: null }),
      };
      worker = await Worker.create({
        connection: await NativeConnection.connect({ address }),
        namespace,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./support/contract-workflows.ts', import.meta.url)),
        activities,
      });
      running = worker.run();
      connection = await Connection.connect({ address });
      client = new Client({ connection, namespace });
    }, 120_000);
    afterAll(async () => {
      worker?.shutdown();
      await running;
      await connection?.close();
    });

    const run = (workflowType: string, args: unknown[]) => client.workflow.execute(workflowType, { taskQueue, workflowId: `${workflowType}-${randomUUID()}`, args });

    it('fails an activity given a malformed input at once, non-retryably, naming each field, before it runs', async () => {
      const error = await run('sendRawInput', ['renderLipSync', { ...lipSyncInput, imageKey: 42, watermark: undefined }]).catch((failure: unknown) => failure);
      const violation = violationOf(error);
      expect(violation.type).toBe(FAILURE_TYPES.contract);
      expect(violation.nonRetryable).toBe(true);
      expect(violation.message).toMatch(/^The input of the activity renderLipSync breaks the contract: /);
      expect(violation.message).toContain('imageKey: ');
      expect(violation.message).toContain('watermark: ');
      // The retry policy allows three attempts: a contract violation takes one, and the activity itself never ran.
      expect(attempts).toBe(1);
      expect(received).toEqual([]);
    });

    it('hands a well-formed input to the activity as parsed (unknown fields dropped)', async () => {
      expect(await run('sendRawInput', ['renderLipSync', { ...lipSyncInput, surplus: 'dropped' }])).toEqual(lipSyncResult);
      expect(received).toEqual([lipSyncInput]);
    });

    it('refuses, in the workflow sandbox, an activity result that breaks the contract', async () => {
      const violation = violationOf(await run('detectThroughContract', ['photo.png']).catch((failure: unknown) => failure));
      expect(violation).toMatchObject({ type: FAILURE_TYPES.contract, nonRetryable: true });
      expect(violation.message).toMatch(/^The result of the activity detectFace breaks the contract: width: /);
    });

    it('refuses a workflow start input that breaks the contract', async () => {
      const violation = violationOf(await run('detectFace', [{ imageKey: 7 }]).catch((failure: unknown) => failure));
      expect(violation).toMatchObject({ type: FAILURE_TYPES.contract, nonRetryable: true });
      expect(violation.message).toMatch(/^The input of the workflow detectFace breaks the contract: imageKey: /);
    });
  });
});
