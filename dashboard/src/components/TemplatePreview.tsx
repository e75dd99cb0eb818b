import type { Template } from '../api/client.ts';
import { usePrefersReducedMotion } from './reduced-motion.ts';

/**
 * A template's example clip: playing silently in a loop, or, for people who prefer reduced motion, still
 * with controls. Before its clip exists, the still preview (or nothing).
 */
export function TemplatePreview({ template, autoPlay = true }: { template: Template; autoPlay?: boolean }) {
  const reduced = usePrefersReducedMotion();
  const play = autoPlay && !reduced;
  if (template.preview_video_url) {
    return (
      <video
        className="template-media"
        src={template.preview_video_url}
        poster={template.preview_image_url ?? undefined}
        muted={play}
        loop={play}
        autoPlay={play}
        playsInline
        controls={!play}
        preload={play ? 'auto' : 'none'}
        aria-label={`Example video: ${template.name}`}
      />
    );
  }
  if (template.preview_image_url) return <img className="template-media" src={template.preview_image_url} alt={`Example still: ${template.name}`} />;
  return <div className="template-media template-media-empty" aria-hidden="true" />;
}
