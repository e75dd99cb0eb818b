import { histogram, renderStageDuration, type MetricsRegistry, type RenderDevice, type RenderStage } from '@petsing/platform/metrics';

export type { RenderDevice };

/** The stages a render node times (audio_preparation runs on the control worker). */
type NodeStage = Exclude<RenderStage, 'audio_preparation'>;

/** What a render node reports (docs/metrics.md): the time of each stage, and each render's speed. */
export interface RenderNodeMetrics {
  stage(stage: NodeStage, device: RenderDevice, seconds: number): void;
  /** One observation per finished render: its frames over the seconds it took to draw and encode them. */
  rendered(device: RenderDevice, framesPerSecond: number): void;
}

export const noRenderNodeMetrics: RenderNodeMetrics = { stage: () => {}, rendered: () => {} };

/** The render node's metrics in `registry` (the embedded service's shared one, or a render node's own). */
export function prometheusRenderNodeMetrics(registry: MetricsRegistry): RenderNodeMetrics {
  const stages = renderStageDuration(registry);
  const speed = histogram(registry, {
    name: 'petsing_render_frames_per_second',
    help: 'Frames per second of each finished render (its frames over the time it took to draw and encode them), by device.',
    labelNames: ['device'],
    buckets: [1, 2.5, 5, 10, 15, 25, 50, 100, 200, 400, 800],
  });
  return {
    stage: (stage, device, seconds) => stages.observe({ stage, device }, seconds),
    rendered: (device, framesPerSecond) => speed.observe({ device }, framesPerSecond),
  };
}

/** `gpu` when the ONNX session runs on CUDA (the provider actually in use, after any fallback), else `cpu`. */
export const deviceOf = (provider: 'cpu' | 'cuda' | undefined): RenderDevice => (provider === 'cuda' ? 'gpu' : 'cpu');
