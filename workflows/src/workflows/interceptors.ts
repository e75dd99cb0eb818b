import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * The workflow side of tracing (docs/operations.md, "Traces"); not a workflow. Temporal bundles this module into the
 * workflow code and calls `interceptors` for every workflow: a workflow continues the trace its starter put in its
 * headers (`RunWorkflow:<type>`), each activity it schedules is a span of it (`StartActivity:<type>`) whose context
 * goes to the activity in its headers, and signals it receives are spans too. The spans leave the sandbox through the
 * worker's `exporter` sink (`temporalWorkerTracing` in @petsing/platform/tracing).
 *
 * Every workflow bundle carries it (`@petsing/workflows/bundle`: `npm run bundle:workflows` and the one a control
 * worker keeps in DATA_DIR); a worker that does not trace drops the spans.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new OpenTelemetryInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
