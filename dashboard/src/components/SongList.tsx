import { useEffect, useRef, useState } from 'react';
import type { Template } from '../api/client.ts';

/**
 * The songs as a compact list of radio rows, each with a Listen button that plays the song itself (one at a
 * time, loaded only when asked for), so the photo, the song and "Make it sing" fit a phone's two screens.
 */
export function SongList({ templates, chosen, name, idPrefix, onChoose }: { templates: Template[]; chosen: string | undefined; name: string; idPrefix: string; onChoose(id: string): void }) {
  const player = useRef<HTMLAudioElement>(null);
  const [playing, setPlaying] = useState<string>();

  useEffect(() => {
    const audio = player.current;
    if (!audio) return;
    const template = templates.find((candidate) => candidate.id === playing);
    if (!template) {
      audio.pause();
      return;
    }
    audio.src = template.audio_url ?? '';
    void audio.play().catch(() => setPlaying(undefined));
  }, [playing, templates]);

  return (
    <>
      <ul className="song-list">
        {templates.map((template) => (
          <li key={template.id} className={`song-row${chosen === template.id ? ' song-chosen' : ''}`}>
            <input type="radio" id={`${idPrefix}-${template.id}`} name={name} value={template.id} checked={chosen === template.id} onChange={() => onChoose(template.id)} />
            <label htmlFor={`${idPrefix}-${template.id}`}>
              <strong>{template.name}</strong> <span className="muted">{Math.round(template.duration_seconds)} s</span>
            </label>
            {template.audio_url ? (
              <button
                type="button"
                className={`listen-button${playing === template.id ? ' listen-playing' : ''}`}
                aria-pressed={playing === template.id}
                aria-label={`Listen to ${template.name}`}
                title={playing === template.id ? 'Stop' : 'Listen'}
                onClick={() => setPlaying(playing === template.id ? undefined : template.id)}
              />
            ) : null}
          </li>
        ))}
      </ul>
      <audio ref={player} preload="none" onEnded={() => setPlaying(undefined)} />
    </>
  );
}
