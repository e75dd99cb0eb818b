import { useId, useState } from 'react';
import { MAX_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { api, call } from '../api/client.ts';
import { ErrorNotice } from './ErrorNotice.tsx';
import { useHostedAudio, type HostedAudio } from './use-hosted-audio.ts';

/**
 * The sound of a short video, named by its link (POST /social/extract-audio: the service checks the host,
 * fetches the video and keeps its sound; a video sings the MAX_AUDIO_SECONDS of it with the most singing), played back before it is used.
 */
export function LinkSource({ onReady }: { onReady: (audio: HostedAudio | undefined) => void }) {
  const ids = { link: useId(), help: useId() };
  const [link, setLink] = useState('');
  const { audio: sound, busy, problem, clear, request } = useHostedAudio(onReady);

  const extract = () =>
    request(async () => {
      const found = await call(api.POST('/social/extract-audio', { body: { url: link.trim() } }));
      return { url: found.audio_url, seconds: found.duration_seconds, title: found.title };
    }, 'The sound could not be taken from this video.');

  return (
    <div className="stack link-source">
      <div className="field">
        <label htmlFor={ids.link}>Link to a short video (TikTok)</label>
        <input
          id={ids.link}
          type="url"
          inputMode="url"
          autoComplete="off"
          placeholder="https://www.tiktok.com/@…/video/…"
          value={link}
          aria-describedby={ids.help}
          onChange={(event) => {
            setLink(event.target.value);
            clear();
          }}
        />
        <p id={ids.help} className="muted small">
          The video must be public. A longer sound is cut to its {MAX_AUDIO_SECONDS} seconds with the most singing.
        </p>
      </div>
      <button type="button" className="button button-secondary" onClick={() => void extract()} disabled={busy || !link.trim()} aria-busy={busy}>
        {busy ? 'Getting the sound…' : 'Get the sound'}
      </button>
      <ErrorNotice problem={problem} title="The sound could not be taken from this video." />
      {sound ? (
        <div>
          <p role="status">
            Sound ready{sound.title ? ` from “${sound.title}”` : ''}: {sound.seconds.toFixed(1)} s.
          </p>
          <audio controls src={sound.url} aria-label="The video's sound" />
        </div>
      ) : null}
    </div>
  );
}
