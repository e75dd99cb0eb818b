import { useId, useState } from 'react';
import { MAX_AUDIO_SECONDS, MAX_SPEECH_CHARACTERS as MAX_TEXT } from '@petsing/workflows/api-rules';
import { api, call } from '../api/client.ts';
import { ErrorNotice } from './ErrorNotice.tsx';
import { useHostedAudio, type HostedAudio } from './use-hosted-audio.ts';
import { useLoad } from './use-load.ts';

/**
 * Typed text spoken by a voice (GET /tts/voices, each with a sample to play): POST /tts makes the speech,
 * which is played back before it is used. Editing the text or changing the voice asks for the speech again.
 */
export function SpeechSource({ onReady }: { onReady: (audio: HostedAudio | undefined) => void }) {
  const ids = { text: useId(), voice: useId(), count: useId() };
  const voices = useLoad((signal) => call(api.GET('/tts/voices', { signal })), 'voices');
  const [text, setText] = useState('');
  const [chosenVoice, setVoice] = useState<string>();
  const voiceId = chosenVoice ?? voices.data?.voices[0]?.id;
  const { audio: speech, busy, problem, clear: changed, request } = useHostedAudio(onReady);
  const length = [...text.trim()].length;

  const speak = (voice: string) =>
    request(async () => {
      const made = await call(api.POST('/tts', { body: { text, voice_id: voice } }));
      return { url: made.audio_url, seconds: made.duration_seconds };
    }, 'The speech could not be made.');

  return (
    <div className="stack speech-source">
      <div className="field">
        <label htmlFor={ids.text}>What your pet says (up to {MAX_TEXT} characters, about {MAX_AUDIO_SECONDS} seconds)</label>
        <textarea
          id={ids.text}
          rows={3}
          value={text}
          aria-describedby={ids.count}
          onChange={(event) => {
            setText(event.target.value);
            changed();
          }}
        />
        <p id={ids.count} className={`small ${length > MAX_TEXT ? 'field-error' : 'muted'}`}>
          {length} of {MAX_TEXT} characters
        </p>
      </div>
      <ErrorNotice problem={voices.problem} title="The voices could not be loaded." />
      {voices.loading && !voices.data ? <p aria-live="polite">Loading voices…</p> : null}
      {voices.data ? (
        <fieldset className="voice-list">
          <legend>The voice</legend>
          {voices.data.voices.map((voice) => (
            <div key={voice.id} className={`voice card${voiceId === voice.id ? ' choice-selected' : ''}`}>
              <input
                type="radio"
                id={`${ids.voice}-${voice.id}`}
                name="voice_id"
                value={voice.id}
                checked={voiceId === voice.id}
                onChange={() => {
                  setVoice(voice.id);
                  changed();
                }}
              />
              <label htmlFor={`${ids.voice}-${voice.id}`}>{voice.name}</label>
              <audio controls preload="none" src={voice.sample_url} aria-label={`Sample of ${voice.name}`} />
            </div>
          ))}
        </fieldset>
      ) : null}
      <button type="button" className="button button-secondary" onClick={() => voiceId && void speak(voiceId)} disabled={busy || length === 0 || length > MAX_TEXT || !voiceId} aria-busy={busy}>
        {busy ? 'Making the speech…' : speech ? 'Make the speech again' : 'Make the speech'}
      </button>
      <ErrorNotice problem={problem} title="The speech could not be made." />
      {speech ? (
        <div>
          <p role="status">Speech ready: {speech.seconds.toFixed(1)} s. Listen to it before you make the video:</p>
          <audio controls src={speech.url} aria-label="The speech" />
        </div>
      ) : null}
    </div>
  );
}
