import { useEffect, useState } from 'react';
import { api, call } from '../api/client.ts';

/** An audio file or recording, or a sound the service hosts (a short video's sound), named by its link. */
type CheckedAudio = File | { url: string };

/**
 * The audio check before paying (POST /audio-check) of an audio file, a recording or a short video's sound: the warning
 * to show when the part a video would sing holds no singing voice (the video would keep the pet's mouth at rest), or
 * undefined (no audio, a check still running, a voice found). A check that fails says nothing: the create checks the
 * audio itself.
 */
export function useAudioCheck(audio: CheckedAudio | undefined): { warning: string | undefined } {
  // The answer for the audio it was asked about: a later audio's check replaces it, and another audio never shows it.
  const [answer, setAnswer] = useState<{ file: CheckedAudio; warning: string | undefined }>();
  useEffect(() => {
    if (!audio) return;
    const abort = new AbortController();
    const form = new FormData();
    if (audio instanceof File) form.append('audio', audio);
    else form.append('audio_url', audio.url);
    // The form carries the file; `body` only satisfies the operation's type.
    call(api.POST('/audio-check', { body: {}, bodySerializer: () => form, signal: abort.signal })).then(
      (check) => setAnswer({ file: audio, warning: check.warning ?? undefined }),
      () => undefined,
    );
    return () => abort.abort();
  }, [audio]);
  return { warning: answer && answer.file === audio ? answer.warning : undefined };
}
