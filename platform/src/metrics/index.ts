export { createMetricsRegistry, counter, gauge, histogram, renderStageDuration, type MetricsRegistry, type RenderDevice, type RenderStage } from './registry.ts';
export { startMetricsServer, startProcessMetrics, type MetricsServer, type ProcessMetrics } from './metrics-server.ts';
