import { useEffect, useState } from 'react';
import { api, call } from '../api/client.ts';

/**
 * The audio check before paying (POST /audio-check) of an audio file or a recording: the warning to show when it holds
 * no singing voice (the video would keep the pet's mouth at rest), or undefined. A check that fails says nothing: the
 * create checks the audio itself.
 */
export function useAudioCheck(audio: File | undefined): { checking: boolean; warning: string | undefined } {
  const [state, setState] = useState<{ checking: boolean; warning: string | undefined }>({ checking: false, warning: undefined });
  useEffect(() => {
    if (!audio) {
      setState({ checking: false, warning: undefined });
      return;
    }
    const abort = new AbortController();
    const form = new FormData();
    form.append('audio', audio);
    setState({ checking: true, warning: undefined });
    // The form carries the file; `body` only satisfies the operation's type.
    call(api.POST('/audio-check', { body: { audio: '' }, bodySerializer: () => form, signal: abort.signal })).then(
      (check) => setState({ checking: false, warning: check.warning ?? undefined }),
      () => {
        if (!abort.signal.aborted) setState({ checking: false, warning: undefined });
      },
    );
    return () => abort.abort();
  }, [audio]);
  return state;
}
