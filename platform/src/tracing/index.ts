import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';
import { ConfigError } from '../runtime/config.ts';
import type { OtlpProtocol, StartedTracing } from './sdk.ts';

/**
 * OpenTelemetry tracing (docs/operations.md, "Traces"), off unless the standard variables turn it on. This module
 * loads nothing of OpenTelemetry: the SDK, its instrumentations and Temporal's interceptors are imported only by a
 * process that traces, and `startTracing` must run before the modules they instrument load (the bin script calls
 * it before it imports the CLI).
 */

type TracingSettings = { enabled: false } | { enabled: true; protocol: OtlpProtocol };

const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json', 'grpc'];
const given = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

/**
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT),
 * unless OTEL_SDK_DISABLED is `true` or OTEL_TRACES_EXPORTER is `none`. Everything else (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and its argument, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*) the
 * OpenTelemetry SDK reads itself.
 */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings {
  if (given(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return { enabled: false };
  if (!given(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && !given(env.OTEL_EXPORTER_OTLP_ENDPOINT)) return { enabled: false };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.length > 0 && !exporters.includes('otlp')) {
    if (exporters.includes('none')) return { enabled: false };
    throw new ConfigError([`OTEL_TRACES_EXPORTER: petsing exports traces over OTLP only: "otlp" (the default) or "none", not "${exporters.join(',')}"`]);
  }
  const setting = given(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = given(env[setting]) ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol as OtlpProtocol)) {
    throw new ConfigError([`${setting}: one of ${PROTOCOLS.join(', ')}, not "${protocol}"`]);
  }
  return { enabled: true, protocol: protocol as OtlpProtocol };
}

let started: StartedTracing | undefined;

/**
 * Starts the OpenTelemetry SDK when the environment turns tracing on (else does nothing and loads nothing), and
 * says whether it did. `serviceName` is the default of `service.name`; OTEL_SERVICE_NAME overrides it.
 */
export async function startTracing(options: { serviceName: string; env?: NodeJS.ProcessEnv }): Promise<boolean> {
  if (started) return true;
  const settings = tracingSettings(options.env ?? process.env);
  if (!settings.enabled) return false;
  const { startSdk } = await import('./sdk.ts');
  started = await startSdk({ serviceName: options.serviceName, protocol: settings.protocol });
  return true;
}

/** Exports the spans still buffered and stops the SDK; a no-op in a process that does not trace. */
export async function stopTracing(): Promise<void> {
  const stopping = started;
  started = undefined;
  await stopping?.stop();
}

export const tracingActive = (): boolean => started !== undefined;

/** `trace_id` and `span_id` of the active span, for log lines; undefined outside a span or without tracing. */
export const activeTraceFields = (): { trace_id: string; span_id: string } | undefined => started?.traceFields();

/** The interceptors of a Temporal client: its workflow starts and signals carry the active trace. None without tracing. */
export async function temporalClientInterceptors(): Promise<WorkflowClientInterceptor[]> {
  if (!started) return [];
  const { clientInterceptors } = await import('./temporal.ts');
  return clientInterceptors();
}

/**
 * A prebuilt workflow bundle (`npm run bundle:workflows`) carries the workflow interceptors whether or not the
 * process traces; without tracing their spans are dropped here (an unregistered sink would log an error at every
 * workflow task).
 */
const droppedWorkflowSpans: InjectedSinks<{ exporter: { export(...args: unknown[]): void } }> = {
  exporter: { export: { fn: () => undefined } },
};

/**
 * The tracing options of a Temporal worker: activity interceptors (each activity runs in a span that continues the
 * workflow's trace, and its log lines carry it) and the sink that exports the workflow's spans (the workflow
 * interceptors are in the bundle, `@petsing/workflows/bundle`). Without tracing only the sink that drops the
 * bundle's workflow spans.
 */
export async function temporalWorkerTracing(): Promise<Pick<WorkerOptions, 'interceptors' | 'sinks'>> {
  if (!started) return { sinks: droppedWorkflowSpans };
  const { workerTracing } = await import('./temporal.ts');
  return workerTracing(started);
}
