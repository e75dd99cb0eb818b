import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { StartedTracing } from './sdk.ts';

/**
 * Temporal's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry): the client puts the active trace
 * into the headers of the workflows it starts (`StartWorkflow:<type>`), the workflow interceptors (in the workflow
 * bundle) continue it (`RunWorkflow:<type>`, `StartActivity:<type>`) and pass it on to the activities, and the
 * activity interceptors continue it on the worker that runs them (`RunActivity:<type>`).
 */

export const clientInterceptors = (): WorkflowClientInterceptor[] => [new OpenTelemetryWorkflowClientInterceptor()];

/**
 * A span as the workflow sandbox's OpenTelemetry SDK 1.x made it: Temporal's interceptors bundle that SDK into
 * the workflow code, and their sink hands its spans over unchanged.
 */
type SandboxSpan = ReadableSpan & {
  parentSpanId?: string;
  instrumentationLibrary?: ReadableSpan['instrumentationScope'];
};

/** Passes the workflows' spans to this process's processor, in the shape of the SDK 2.x it runs (the parent as a span context). */
function workflowSpansTo(processor: SpanProcessor): SpanProcessor {
  return {
    onStart: () => undefined,
    onEnd: (span) => {
      const { parentSpanId, instrumentationLibrary, ...rest } = span as SandboxSpan;
      const { traceId, traceFlags } = span.spanContext();
      processor.onEnd({
        ...rest,
        spanContext: span.spanContext,
        parentSpanContext: span.parentSpanContext ?? (parentSpanId ? { traceId, spanId: parentSpanId, traceFlags } : undefined),
        instrumentationScope: span.instrumentationScope ?? instrumentationLibrary ?? { name: '@temporalio/interceptor-workflow' },
      });
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: async () => undefined,
  };
}

export function workerTracing(started: StartedTracing): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  // The interceptors package types its arguments with the SDK 1.x it depends on; the objects given are of 2.x.
  const exporter = makeWorkflowExporter(
    workflowSpansTo(started.processor) as unknown as Parameters<typeof makeWorkflowExporter>[0],
    started.resource as unknown as Parameters<typeof makeWorkflowExporter>[1],
  );
  return {
    interceptors: {
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter },
  };
}
