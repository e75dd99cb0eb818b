import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration } from 'prom-client';

/** The metrics of one process (docs/metrics.md): every part the process runs writes into the same registry. */
export type MetricsRegistry = Registry;

/** A registry with prom-client's default process metrics (process_*, nodejs_*), unprefixed. */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/*
 * Get-or-create: the embedded service (`petsing start`) runs the API, the control worker and a render worker in
 * one process, on one registry, and a metric two of them write (the render stages) must be registered once.
 */

export function counter<Label extends string>(registry: MetricsRegistry, config: Omit<CounterConfiguration<Label>, 'registers'>): Counter<Label> {
  return (registry.getSingleMetric(config.name) as Counter<Label> | undefined) ?? new Counter({ ...config, registers: [registry] });
}

export function gauge<Label extends string>(registry: MetricsRegistry, config: Omit<GaugeConfiguration<Label>, 'registers'>): Gauge<Label> {
  return (registry.getSingleMetric(config.name) as Gauge<Label> | undefined) ?? new Gauge({ ...config, registers: [registry] });
}

export function histogram<Label extends string>(registry: MetricsRegistry, config: Omit<HistogramConfiguration<Label>, 'registers'>): Histogram<Label> {
  return (registry.getSingleMetric(config.name) as Histogram<Label> | undefined) ?? new Histogram({ ...config, registers: [registry] });
}

/** Where a render stage ran: `gpu` when its ONNX session runs on CUDA, else `cpu` (the face rig, ffmpeg, uploads). */
export type RenderDevice = 'cpu' | 'gpu';
/** photo_check and the render's own stages run on a render node; audio_preparation on the control worker. */
export type RenderStage = 'photo_check' | 'audio_preparation' | 'frames' | 'encode' | 'upload';

/** Written by the render nodes and by the control worker (audio_preparation), so defined here, once. */
export function renderStageDuration(registry: MetricsRegistry): Histogram<'stage' | 'device'> {
  return histogram(registry, {
    name: 'petsing_render_stage_duration_seconds',
    help: 'Time one stage of a render took (photo_check, audio_preparation, frames, encode, upload), by the device it ran on.',
    labelNames: ['stage', 'device'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
  });
}
