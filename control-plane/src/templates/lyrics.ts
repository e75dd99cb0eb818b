/**
 * From a template's words to what the voice sings and the mouth shows: each syllable becomes a
 * vowel (the sound held on the note) and an onset (how the syllable starts). Spelling is read
 * loosely, like a child reading a song sheet; the templates are English, French and German.
 */
export type Vowel = 'a' | 'e' | 'i' | 'o' | 'u' | 'schwa';

/** lips: m, b, p (the mouth starts shut); round: w; liquid: l, r; tongue: the other consonants; none: a bare vowel. */
export type Onset = 'lips' | 'round' | 'liquid' | 'tongue' | 'none';

export interface Syllable {
  text: string;
  onset: Onset;
  vowel: Vowel;
}

/** How open and how rounded the mouth is on each vowel (0-1): ah is wide open, oo small and round. */
export const VOWEL_POSE: Record<Vowel, { open: number; round: number }> = {
  a: { open: 1, round: 0 },
  e: { open: 0.65, round: 0 },
  i: { open: 0.4, round: 0 },
  o: { open: 0.75, round: 0.75 },
  u: { open: 0.45, round: 1 },
  schwa: { open: 0.55, round: 0.2 },
};

// Letter groups, longest first; the first group found in a syllable is its vowel.
const VOWEL_SPELLINGS: ReadonlyArray<[string, Vowel]> = [
  ['eigh', 'e'], ['eau', 'o'], ['oo', 'u'], ['ou', 'u'], ['ee', 'i'], ['ea', 'i'], ['ie', 'i'], ['ai', 'e'], ['ay', 'e'],
  ['ei', 'a'], ['eu', 'o'], ['oi', 'a'], ['ow', 'o'], ['au', 'o'],
  ['a', 'a'], ['ä', 'e'], ['â', 'a'], ['e', 'e'], ['é', 'e'], ['è', 'e'], ['ê', 'e'], ['i', 'i'], ['y', 'i'],
  ['o', 'o'], ['ö', 'e'], ['ô', 'o'], ['u', 'u'], ['ü', 'i'],
];

/** Single letters sung on their own: the letter names of "E-I-E-I-O", and the article "a". */
const LETTER_NAMES: Record<string, Vowel> = { a: 'schwa', e: 'i', i: 'a', o: 'o', u: 'u' };
const VOWEL_LETTERS = 'aäâeéèêioöôuü';

function onsetOf(consonants: string): Onset {
  if (consonants === '') return 'none';
  const first = consonants[0]!;
  if ('mbp'.includes(first)) return 'lips';
  if (first === 'w' || consonants.startsWith('qu')) return 'round';
  if ('lr'.includes(first)) return 'liquid';
  return 'tongue';
}

export function parseSyllable(text: string): Syllable {
  const word = text.toLowerCase().replace(/[^a-zäâéèêöôüàç]/g, '');
  if (word.length === 1 && LETTER_NAMES[word]) return { text, onset: 'none', vowel: LETTER_NAMES[word] };
  for (let at = 0; at < word.length; at++) {
    // A "y" before a vowel is a consonant ("you").
    if (word[at] === 'y' && VOWEL_LETTERS.includes(word[at + 1] ?? '')) continue;
    const match = VOWEL_SPELLINGS.find(([spelling]) => word.startsWith(spelling, at));
    if (!match) continue;
    // A French or German unstressed final "-e" ("lu-ne", "Freu-de") is a schwa.
    const vowel = match[1] === 'e' && match[0] === 'e' && at === word.length - 1 && at > 0 ? 'schwa' : match[1];
    return { text, onset: onsetOf(word.slice(0, at)), vowel };
  }
  return { text, onset: onsetOf(word), vowel: 'schwa' };
}

/** The syllables of a template's lyrics, in order: words split on spaces, syllables on hyphens. */
export function syllablesOf(lyrics: string): Syllable[] {
  return lyrics
    .split(/[\s-]+/)
    .map((part) => part.trim())
    .filter((part) => /[\p{L}]/u.test(part))
    .map(parseSyllable);
}
