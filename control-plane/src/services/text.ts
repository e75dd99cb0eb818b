/**
 * The one rule for text a client sends, on every surface (/v1 and the web app's bodies, queries and paths, form
 * fields, OAuth parameters and client metadata, MCP tool arguments, operator commands over the control socket):
 * no NUL (Postgres cannot store it in text), no other control character (C0 but for tab, line feed and carriage
 * return, which multi-line text such as speech legitimately holds; DEL; C1), and no unpaired UTF-16 surrogate
 * (not Unicode text; it would be stored as U+FFFD). No client means any of them, and each can hide or rewrite
 * what a log line, a terminal or a name shown to a person says. Names shown to people also refuse the
 * bidirectional embedding, override and isolate controls, which can make a name read as something else.
 */
// \p{Cc} is C0, DEL and C1; \p{Cs} a surrogate, which in a JavaScript string can only be an unpaired one.
const INVALID_TEXT = /(?![\t\n\r])[\p{Cc}\p{Cs}]/u;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/u;

export const INVALID_TEXT_MESSAGE =
  'must not contain NUL or other control characters (tab, line feed and carriage return aside) or unpaired UTF-16 surrogates';
export const BIDI_CONTROLS_MESSAGE = 'must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)';

export const isValidText = (value: string): boolean => !INVALID_TEXT.test(value);
export const isDisplayableName = (value: string): boolean => isValidText(value) && !BIDI_CONTROLS.test(value);

type Visit = { value: unknown; key: string | number | undefined; parent: Visit | undefined };

const pathOf = (visit: Visit): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * The path of the first string inside `value` (an object, array or string), member names included, that breaks
 * the text rule. Walked with a stack of its own, never recursion, and each path is built only for the answer,
 * so the cost grows with the size of the value whatever its depth.
 */
export function findInvalidText(value: unknown): (string | number)[] | undefined {
  const pending: Visit[] = [{ value, key: undefined, parent: undefined }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    if (typeof visit.key === 'string' && !isValidText(visit.key)) return pathOf(visit);
    const current = visit.value;
    if (typeof current === 'string') {
      if (!isValidText(current)) return pathOf(visit);
    } else if (Array.isArray(current)) {
      // Pushed last to first, so the first offender in document order is the one found.
      for (let index = current.length - 1; index >= 0; index--) pending.push({ value: current[index], key: index, parent: visit });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, item] = entries[index]!;
        pending.push({ value: item, key, parent: visit });
      }
    }
  }
  return undefined;
}
