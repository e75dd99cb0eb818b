import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../errors/app-error.ts';
import type { Logger } from '../../logging/logger.ts';
import { withDeadline } from '../deadline.ts';
import { type SpeechProvider, type SpeechVoice, type SynthesisRequest } from './speech-provider.ts';

export type HttpSpeechSettings = {
  /** Base address; requests go to {url}/v1/audio/speech. */
  url: string;
  apiKey: string | undefined;
  model: string;
  voices: readonly string[];
  timeoutMs: number;
};

/** Far above 30 s of MP3 at any sensible bitrate; a larger answer is not speech we asked for. */
const MAX_AUDIO_BYTES = 16 * 1024 * 1024;
const RETRY_AFTER = /^\d+$/;

/**
 * An upstream text-to-speech API speaking the OpenAI speech protocol (POST /v1/audio/speech), which
 * most hosted and self-hosted TTS servers implement. Its quota running out becomes our 429; an outage,
 * an error answer or a timeout becomes 503. The API key only ever travels in the Authorization header.
 */
export class HttpSpeechProvider implements SpeechProvider {
  readonly name = 'http';
  private readonly endpoint: string;

  constructor(
    private readonly settings: HttpSpeechSettings,
    private readonly logger: Logger,
  ) {
    this.endpoint = `${settings.url.replace(/\/+$/, '')}/v1/audio/speech`;
  }

  voices(): readonly SpeechVoice[] {
    // Upstream voices are typically multilingual: they speak whatever language the text is in.
    return this.settings.voices.map((id) => ({ id, name: id.charAt(0).toUpperCase() + id.slice(1), language: 'mul' }));
  }

  async synthesize({ text, voiceId, directory, signal }: SynthesisRequest): Promise<{ path: string }> {
    const { timeoutMs, apiKey, model } = this.settings;
    // One deadline covers the whole exchange, the audio download included.
    const deadline = withDeadline(signal, timeoutMs);
    const path = join(directory, 'speech.mp3');
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'audio/mpeg', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model, input: text, voice: voiceId, response_format: 'mp3' }),
        signal: deadline.signal,
        redirect: 'error',
      });
      if (!response.ok) throw await this.upstreamFailure(response);
      await saveBody(response, path);
    } catch (error) {
      if (error instanceof AppError || signal?.aborted) throw error;
      const message = deadline.timedOut()
        ? `The speech provider did not answer within ${timeoutMs} ms.`
        : 'The speech provider could not be reached or sent an unusable answer.';
      throw new AppError('speech_unavailable', message, { cause: error });
    }
    return { path };
  }

  private async upstreamFailure(response: Response): Promise<AppError> {
    const detail = await this.errorDetail(response);
    if (response.status === 429) {
      this.logger.warn({ upstreamStatus: response.status, detail }, 'speech provider quota exhausted');
      const retryAfter = response.headers.get('retry-after')?.trim();
      const valid = retryAfter && (RETRY_AFTER.test(retryAfter) || !Number.isNaN(Date.parse(retryAfter)));
      return new AppError('speech_quota_exhausted', 'The speech provider’s quota is used up for now.', valid ? { headers: { 'Retry-After': retryAfter } } : {});
    }
    // 5xx is an outage; any other refusal (401, 403, 404, 400) means our configuration is wrong — neither is the caller's fault.
    this.logger.error({ upstreamStatus: response.status, detail }, 'speech provider refused the request');
    return new AppError('speech_unavailable', `The speech provider answered with status ${response.status}.`);
  }

  /** The start of the upstream error body, for the log only, with the key masked should it be echoed back. */
  private async errorDetail(response: Response): Promise<string> {
    const body = await response.text().catch(() => '');
    const detail = body.slice(0, 500);
    return this.settings.apiKey ? detail.replaceAll(this.settings.apiKey, '[redacted]') : detail;
  }
}

async function saveBody(response: Response, path: string): Promise<void> {
  if (!response.body) throw new Error('the speech provider sent no audio');
  const file = await open(path, 'w');
  try {
    let bytes = 0;
    for await (const chunk of response.body) {
      bytes += chunk.byteLength;
      if (bytes > MAX_AUDIO_BYTES) throw new Error(`the speech provider sent more than ${MAX_AUDIO_BYTES} bytes`);
      await file.write(chunk);
    }
    if (bytes === 0) throw new Error('the speech provider sent an empty answer');
  } finally {
    await file.close();
  }
}
