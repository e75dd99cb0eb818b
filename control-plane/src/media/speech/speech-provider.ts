export type SpeechVoice = {
  /** The id clients send as `voice_id`; also a path segment and an object-key segment, so [A-Za-z0-9._-] only. */
  id: string;
  name: string;
  /** BCP 47 tag of the language the voice speaks (`mul` for multilingual upstream voices). */
  language: string;
};

export type SynthesisRequest = {
  text: string;
  voiceId: string;
  /** A scratch folder owned by the caller, who removes it afterwards: the provider writes its file here. */
  directory: string;
  signal?: AbortSignal;
};

/**
 * Turns text into speech. Implementations answer with a local audio file in any format ffmpeg reads;
 * SpeechService makes it the MP3 a video can use. Failures are AppErrors: `speech_quota_exhausted`
 * (429) when an upstream quota is used up, `speech_unavailable` (503) for outages and timeouts.
 */
export interface SpeechProvider {
  /** Names the stored sample clips (`voices/<name>/<voice>.mp3`), so switching providers never reuses another's samples. */
  readonly name: string;
  voices(): readonly SpeechVoice[];
  synthesize(request: SynthesisRequest): Promise<{ path: string }>;
}
