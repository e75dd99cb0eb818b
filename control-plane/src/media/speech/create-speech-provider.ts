import type { ControlPlaneEnv } from '../../config/env.ts';
import type { Logger } from '../../logging/logger.ts';
import { EspeakSpeechProvider } from './espeak-speech.provider.ts';
import { HttpSpeechProvider } from './http-speech.provider.ts';
import type { SpeechProvider } from './speech-provider.ts';

/** The provider TTS_PROVIDER names. */
export function createSpeechProvider(env: ControlPlaneEnv, logger: Logger): SpeechProvider {
  if (env.TTS_PROVIDER === 'http') {
    // loadControlPlaneConfig refuses TTS_PROVIDER=http without TTS_API_URL.
    return new HttpSpeechProvider(
      { url: env.TTS_API_URL!, apiKey: env.TTS_API_KEY, model: env.TTS_MODEL, voices: env.TTS_VOICES, timeoutMs: env.TTS_TIMEOUT_MS },
      logger,
    );
  }
  return new EspeakSpeechProvider({ espeakPath: env.ESPEAK_PATH, timeoutMs: env.TTS_TIMEOUT_MS });
}
