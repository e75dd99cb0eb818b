import { useEffect, useState } from 'react';
import { api, call } from '../api/client.ts';

/**
 * The audio check before paying (POST /audio-check) of an audio file or a recording: the warning to show when it holds
 * no singing voice (the video would keep the pet's mouth at rest), or undefined (no audio, a check still running, a
 * voice found). A check that fails says nothing: the create checks the audio itself.
 */
export function useAudioCheck(audio: File | undefined): { warning: string | undefined } {
  // The answer for the file it was asked about: a later file's check replaces it, and another file never shows it.
  const [answer, setAnswer] = useState<{ file: File; warning: string | undefined }>();
  useEffect(() => {
    if (!audio) return;
    const abort = new AbortController();
    const form = new FormData();
    form.append('audio', audio);
    // The form carries the file; `body` only satisfies the operation's type.
    call(api.POST('/audio-check', { body: { audio: '' }, bodySerializer: () => form, signal: abort.signal })).then(
      (check) => setAnswer({ file: audio, warning: check.warning ?? undefined }),
      () => undefined,
    );
    return () => abort.abort();
  }, [audio]);
  return { warning: answer && answer.file === audio ? answer.warning : undefined };
}
