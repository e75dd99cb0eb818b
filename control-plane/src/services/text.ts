/**
 * The one rule for text a client sends: no NUL (Postgres cannot store it in text, and no client means
 * it) and no unpaired UTF-16 surrogate (not Unicode text; it would be stored as U+FFFD). Names shown to
 * people also refuse the bidirectional embedding, override and isolate controls, which can make a name
 * read as something else.
 */
const INVALID_TEXT = /[\0\p{Cs}]/u;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/u;

export const INVALID_TEXT_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';
export const BIDI_CONTROLS_MESSAGE = 'must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)';

export const isValidText = (value: string): boolean => !INVALID_TEXT.test(value);
export const isDisplayableName = (value: string): boolean => isValidText(value) && !BIDI_CONTROLS.test(value);

/** The path of the first string inside `value` (an object, array or string) that breaks the text rule. */
export function findInvalidText(value: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === 'string') return isValidText(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findInvalidText(item, [...path, index]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = findInvalidText(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}
