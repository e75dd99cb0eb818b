import { useState } from 'react';
import type { Template } from '../api/client.ts';

/**
 * A template's example clip as a still with a play button: nothing of the clip loads until it is tapped (a phone
 * on a metered connection pays for what it plays), then it plays with its sound and controls. Before its clip
 * exists (a new service renders them after it starts), the still and a word that the example is being prepared.
 */
export function TemplatePreview({ template }: { template: Template }) {
  const [playing, setPlaying] = useState(false);
  const still = template.preview_image_url ? <img className="template-media" src={template.preview_image_url} alt="" loading="lazy" decoding="async" /> : null;
  if (template.preview_video_url && playing) {
    return (
      <video
        className="template-media"
        src={template.preview_video_url}
        poster={template.preview_image_url ?? undefined}
        autoPlay
        controls
        playsInline
        aria-label={`Example video: ${template.name}`}
      />
    );
  }
  if (template.preview_video_url) {
    return (
      <button type="button" className="template-poster" onClick={() => setPlaying(true)} aria-label={`Play the example video: ${template.name}`}>
        {still ?? <span className="template-media template-media-empty" />}
        <span className="play-badge" aria-hidden="true" />
      </button>
    );
  }
  return (
    <div className="template-preparing">
      {still ?? <div className="template-media template-media-empty" aria-hidden="true" />}
      <p className="muted small">Example video being prepared…</p>
    </div>
  );
}
