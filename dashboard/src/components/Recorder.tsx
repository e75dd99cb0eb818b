import { useEffect, useRef, useState } from 'react';
import { MAX_AUDIO_SECONDS as MAX_SECONDS, MIN_AUDIO_SECONDS as MIN_SECONDS } from '@petsing/workflows/api-rules';

/** What MediaRecorder should make, in order of preference (the service takes WebM, MP4/AAC, MP3 and WAV). */
const TYPES = ['audio/webm;codecs=opus', 'audio/webm', 'audio/mp4'];

type State = { phase: 'idle' } | { phase: 'recording'; seconds: number } | { phase: 'done'; url: string; seconds: number };

/**
 * Records the sound for a video in the browser (MediaRecorder), as long as the service takes audio
 * (MIN_AUDIO_SECONDS to MAX_AUDIO_SECONDS): stops by itself at the longest, refuses less than the shortest,
 * and plays the take back before it is used.
 */
export function Recorder({ onRecorded }: { onRecorded: (file: File | undefined) => void }) {
  const [state, setState] = useState<State>({ phase: 'idle' });
  const [problem, setProblem] = useState<string>();
  const recorder = useRef<MediaRecorder | undefined>(undefined);
  const timer = useRef<ReturnType<typeof setInterval> | undefined>(undefined);
  const url = state.phase === 'done' ? state.url : undefined;

  useEffect(() => () => (url ? URL.revokeObjectURL(url) : undefined), [url]);
  useEffect(
    () => () => {
      clearInterval(timer.current);
      if (recorder.current?.state === 'recording') recorder.current.stop();
    },
    [],
  );

  const start = async () => {
    setProblem(undefined);
    onRecorded(undefined);
    if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices?.getUserMedia) {
      setProblem('This browser cannot record sound. Choose an audio file instead.');
      return;
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      setProblem('The microphone is not available. Allow this site to use it, or choose an audio file instead.');
      return;
    }
    const mimeType = TYPES.find((type) => MediaRecorder.isTypeSupported(type));
    const take = new MediaRecorder(stream, mimeType ? { mimeType } : undefined);
    const chunks: Blob[] = [];
    const startedAt = Date.now();
    take.addEventListener('dataavailable', (event) => event.data.size > 0 && chunks.push(event.data));
    take.addEventListener('stop', () => {
      clearInterval(timer.current);
      for (const track of stream.getTracks()) track.stop();
      const seconds = (Date.now() - startedAt) / 1000;
      const type = (take.mimeType || mimeType || 'audio/webm').split(';')[0]!;
      if (seconds < MIN_SECONDS) {
        setState({ phase: 'idle' });
        setProblem(`That was ${seconds.toFixed(1)} s; record at least ${MIN_SECONDS} seconds.`);
        return;
      }
      const blob = new Blob(chunks, { type });
      setState({ phase: 'done', url: URL.createObjectURL(blob), seconds });
      onRecorded(new File([blob], `recording.${type === 'audio/mp4' ? 'm4a' : 'webm'}`, { type }));
    });
    recorder.current = take;
    take.start(250);
    setState({ phase: 'recording', seconds: 0 });
    timer.current = setInterval(() => {
      const seconds = (Date.now() - startedAt) / 1000;
      if (seconds >= MAX_SECONDS) take.stop();
      else setState({ phase: 'recording', seconds });
    }, 200);
  };
  const stop = () => recorder.current?.state === 'recording' && recorder.current.stop();

  return (
    <div className="recorder stack">
      <p className="muted">
        Sing, talk or play something for {MIN_SECONDS} to {MAX_SECONDS} seconds; the video is as long as the recording.
      </p>
      {state.phase === 'recording' ? (
        <>
          <p role="status" aria-live="polite" className="recording-time">
            Recording… {Math.floor(state.seconds)} s of at most {MAX_SECONDS} s
          </p>
          <button type="button" className="button button-danger" onClick={stop}>
            Stop recording
          </button>
        </>
      ) : (
        <button type="button" className="button button-secondary" onClick={() => void start()}>
          {state.phase === 'done' ? 'Record again' : 'Start recording'}
        </button>
      )}
      {state.phase === 'done' ? (
        <div>
          <p role="status">Recorded {state.seconds.toFixed(1)} s. Listen to it before you make the video:</p>
          <audio controls src={state.url} aria-label="Your recording" />
        </div>
      ) : null}
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  );
}
