import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess, type ProcessResult } from '@petsing/platform/tools';
import { AppError } from '../../errors/app-error.ts';
import { withDeadline } from '../deadline.ts';
import { type SpeechProvider, type SpeechVoice, type SynthesisRequest } from './speech-provider.ts';

type EspeakVoice = SpeechVoice & { espeakVoice: string };

/**
 * A curated few: espeak-ng knows ~100 languages, but these are the clearest. `+fN` picks a female variant;
 * espeak-ng ignores a variant on the `en-gb` alias, so British English uses its voice file name, `en`.
 */
const espeakVoices: readonly EspeakVoice[] = [
  { id: 'en-us-male', name: 'Sam (American English)', language: 'en-US', espeakVoice: 'en-us' },
  { id: 'en-us-female', name: 'Ava (American English)', language: 'en-US', espeakVoice: 'en-us+f3' },
  { id: 'en-gb-male', name: 'Oliver (British English)', language: 'en-GB', espeakVoice: 'en-gb' },
  { id: 'en-gb-female', name: 'Emma (British English)', language: 'en-GB', espeakVoice: 'en+f2' },
  { id: 'es-female', name: 'Lucía (Spanish)', language: 'es-ES', espeakVoice: 'es+f2' },
  { id: 'fr-male', name: 'Louis (French)', language: 'fr-FR', espeakVoice: 'fr-fr' },
  { id: 'de-female', name: 'Greta (German)', language: 'de-DE', espeakVoice: 'de+f4' },
  { id: 'it-male', name: 'Marco (Italian)', language: 'it-IT', espeakVoice: 'it' },
  { id: 'pt-br-female', name: 'Ana (Brazilian Portuguese)', language: 'pt-BR', espeakVoice: 'pt-br+f4' },
];

/** The local default: the espeak-ng command-line synthesizer, run without a shell. */
export class EspeakSpeechProvider implements SpeechProvider {
  readonly name = 'espeak';

  constructor(private readonly options: { espeakPath: string; timeoutMs: number }) {}

  voices(): readonly SpeechVoice[] {
    return espeakVoices.map(({ id, name, language }) => ({ id, name, language }));
  }

  async synthesize({ text, voiceId, directory, signal }: SynthesisRequest): Promise<{ path: string }> {
    const voice = espeakVoices.find((candidate) => candidate.id === voiceId);
    if (!voice) throw new AppError('unknown_voice', `There is no voice ${JSON.stringify(voiceId)}.`);
    // The text goes in a file, not argv: text starting with "-" can never be read as an option.
    const textPath = join(directory, 'text.txt');
    const wavPath = join(directory, 'speech.wav');
    await writeFile(textPath, text, 'utf8');

    // spawn's signal kills espeak-ng when the caller gives up or the deadline passes.
    const deadline = withDeadline(signal, this.options.timeoutMs);
    let result: ProcessResult;
    try {
      result = await runProcess(this.options.espeakPath, ['-v', voice.espeakVoice, '-b', '1', '-f', textPath, '-w', wavPath], { signal: deadline.signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      const message = deadline.timedOut() ? `The speech synthesizer did not finish within ${this.options.timeoutMs} ms.` : 'The speech synthesizer could not be started.';
      throw new AppError('speech_unavailable', message, { cause: error });
    }
    if (result.code !== 0) {
      // espeak-ng's own words go to the log (the cause), not to the caller.
      throw new AppError('speech_unavailable', 'The speech synthesizer failed.', { cause: new Error(`espeak-ng exited with code ${result.code}: ${result.stderr.trim().slice(-300)}`) });
    }
    return { path: wavPath };
  }
}
