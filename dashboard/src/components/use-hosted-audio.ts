import { useState } from 'react';
import { ApiProblem } from '../api/client.ts';

/** Sound the service already hosts for this person (POST /tts, POST /social/extract-audio), named by its link. */
export type HostedAudio = { url: string; seconds: number; title?: string | null };

/**
 * One hosted sound asked of the service at a time: what came back (also handed to `onReady`), whether a request
 * is running, and why the last one failed. `clear()` forgets the sound when what it was made from changes.
 */
export function useHostedAudio(onReady: (audio: HostedAudio | undefined) => void) {
  const [audio, setAudio] = useState<HostedAudio>();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem>();
  const clear = () => {
    setAudio(undefined);
    setProblem(undefined);
    onReady(undefined);
  };
  const request = async (make: () => Promise<HostedAudio>, failure: string) => {
    setBusy(true);
    clear();
    try {
      const made = await make();
      setAudio(made);
      onReady(made);
    } catch (error) {
      setProblem(error instanceof ApiProblem ? error : new ApiProblem(failure, 'Try again.', undefined, undefined));
    } finally {
      setBusy(false);
    }
  };
  return { audio, busy, problem, clear, request };
}
