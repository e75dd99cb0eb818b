import { register } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, detectResources, envDetector, hostDetector, processDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { createAddHookMessageChannel } from 'import-in-the-middle';
export type OtlpProtocol = 'grpc' | 'http/protobuf' | 'http/json';

export type StartedTracing = {
  traceFields(): { trace_id: string; span_id: string } | undefined;
  /** Where the Temporal workers' sink hands the workflows' spans (they are made inside the workflow sandbox). */
  processor: SpanProcessor;
  resource: Resource;
  stop(): Promise<void>;
};

/** Requests that are not worth a trace each: liveness and readiness probes, Prometheus' scrapes of the metrics listeners. */
const UNTRACED_PATHS = new Set(['/health', '/health/ready', '/metrics']);

async function otlpExporter(protocol: OtlpProtocol): Promise<SpanExporter> {
  // Each exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION itself.
  switch (protocol) {
    case 'grpc':
      return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  }
}

const whole = (name: string) => {
  const value = Number(process.env[name]?.trim() || Number.NaN);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
};

/**
 * Starts the OpenTelemetry SDK: traces only, exported over OTLP with a batch processor, with the HTTP, Express and
 * pg instrumentations. The project's code is ECMAScript modules (through tsx), so besides require-in-the-middle
 * (CommonJS) import-in-the-middle's loader hook is registered first, told through its message channel which modules
 * the instrumentations hook, and awaited: the modules this process imports next (the CLI, Express, pg, node:http)
 * are then patched as they load.
 */
export async function startSdk(options: { serviceName: string; protocol: OtlpProtocol }): Promise<StartedTracing> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const processor = new BatchSpanProcessor({
    exporter: await otlpExporter(options.protocol),
    maxQueueSize: whole('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: whole('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: whole('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: whole('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  });
  // service.name: OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) if set, else the process's own name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': options.serviceName }))
    .merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] }));
  const sdk = new NodeSDK({
    resource,
    autoDetectResources: false,
    spanProcessors: [processor],
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]!),
        // Background work (sweeps, pollers) calls out without a trace of its own: no root span for each call.
        requireParentforOutgoingSpans: true,
      }),
      new ExpressInstrumentation(),
      // Queries of a request or an activity are traced; the pollers' and sweeps' own are not (each would be a trace).
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();

  return {
    traceFields: () => {
      const span = trace.getSpan(context.active())?.spanContext();
      return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
    },
    processor,
    resource,
    stop: () => sdk.shutdown(),
  };
}
