type Letter = 'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'G';
type Accidental = '' | '#' | 'b';

/** Scientific pitch notation, e.g. 'C4' is middle C and 'A4' is 440 Hz. */
export type PitchName = `${Letter}${Accidental}${2 | 3 | 4 | 5 | 6}`;

/** A chord symbol: root, then '' for major, 'm' for minor or '7' for a dominant seventh. */
export type ChordSymbol = `${Letter}${Accidental}${'' | 'm' | '7'}`;

/** Lengths are in beats; a 'rest' is silent so the lip-sync model closes the pet's mouth. */
type MelodyNote = readonly [pitch: PitchName | 'rest', beats: number];

type ChordSpan = readonly [chord: ChordSymbol, beats: number];

export interface TemplateLook {
  animal: 'dog' | 'cat';
  backgroundTop: string;
  backgroundBottom: string;
  fur: string;
  /** Ears, patches and the musical notes. */
  accent: string;
}

export interface TemplateDefinition {
  /** Numeric string; ids are part of the public API, so never renumber a shipped template. */
  id: string;
  name: string;
  description: string;
  tempoBpm: number;
  beatsPerBar: number;
  /** Distance between accompaniment strokes: 1 for a 4/4 "oom-pah", 1.5 for a 6/8 lilt. */
  pulseBeats: number;
  notes: readonly MelodyNote[];
  /**
   * The words, one syllable per sung note (rests take none), separated by spaces; hyphens join the
   * syllables of a word ("twin-kle"). The voice sings each syllable's vowel, and the pet's mouth is
   * keyed to it.
   */
  lyrics: string;
  /** Must cover exactly as many beats as `notes`. */
  chords: readonly ChordSpan[];
  look: TemplateLook;
}

// Every melody below is a traditional tune or a classical theme in the public domain; arrangements
// are ours. Phrases end in a short rest so the pet visibly breathes between lines.
export const templateCatalog: readonly TemplateDefinition[] = [
  {
    id: '1',
    name: 'Twinkle Twinkle Little Star',
    description: 'The classic lullaby, sung sweetly over a gentle oom-pah.',
    tempoBpm: 116,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['C4', 1], ['C4', 1], ['G4', 1], ['G4', 1], ['A4', 1], ['A4', 1], ['G4', 1.5], ['rest', 0.5],
      ['F4', 1], ['F4', 1], ['E4', 1], ['E4', 1], ['D4', 1], ['D4', 1], ['C4', 1.5], ['rest', 0.5],
      ['G4', 1], ['G4', 1], ['F4', 1], ['F4', 1], ['E4', 1], ['E4', 1], ['D4', 1.5], ['rest', 0.5],
      ['F4', 1], ['F4', 1], ['E4', 1], ['E4', 1], ['D4', 1], ['D4', 1], ['C4', 1.5], ['rest', 0.5],
    ],
    lyrics: 'Twin-kle twin-kle lit-tle star, how I won-der what you are, up a-bove the world so high, like a dia-mond in the sky',
    chords: [
      ['C', 4], ['F', 2], ['C', 2],
      ['F', 2], ['C', 2], ['G', 2], ['C', 2],
      ['C', 2], ['F', 2], ['C', 2], ['G', 2],
      ['F', 2], ['C', 2], ['G7', 2], ['C', 2],
    ],
    look: { animal: 'cat', backgroundTop: '#1d2b64', backgroundBottom: '#6a5acd', fur: '#f4c27a', accent: '#ffe27a' },
  },
  {
    id: '2',
    name: 'Ode to Joy',
    description: "Beethoven's joyful theme from the Ninth Symphony.",
    tempoBpm: 120,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['E4', 1], ['E4', 1], ['F4', 1], ['G4', 1], ['G4', 1], ['F4', 1], ['E4', 1], ['D4', 1],
      ['C4', 1], ['C4', 1], ['D4', 1], ['E4', 1], ['E4', 1.5], ['D4', 0.5], ['D4', 1.5], ['rest', 0.5],
      ['E4', 1], ['E4', 1], ['F4', 1], ['G4', 1], ['G4', 1], ['F4', 1], ['E4', 1], ['D4', 1],
      ['C4', 1], ['C4', 1], ['D4', 1], ['E4', 1], ['D4', 1.5], ['C4', 0.5], ['C4', 1.5], ['rest', 0.5],
    ],
    lyrics: 'Freu-de, schö-ner Göt-ter-fun-ken, Toch-ter aus E-ly-si-um, wir be-tre-ten feu-er-trun-ken, Himm-li-sche, dein Hei-lig-tum',
    chords: [
      ['C', 4], ['G', 4], ['C', 4], ['C', 2], ['G', 2],
      ['C', 4], ['G', 4], ['C', 4], ['G7', 2], ['C', 2],
    ],
    look: { animal: 'dog', backgroundTop: '#ffb347', backgroundBottom: '#ff5e62', fur: '#c68642', accent: '#fff3b0' },
  },
  {
    id: '3',
    name: 'Frère Jacques',
    description: 'The sleepy French round: "Are you sleeping, Brother John?"',
    tempoBpm: 120,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['C4', 1], ['D4', 1], ['E4', 1], ['C4', 1], ['C4', 1], ['D4', 1], ['E4', 1], ['C4', 1],
      ['E4', 1], ['F4', 1], ['G4', 1.5], ['rest', 0.5], ['E4', 1], ['F4', 1], ['G4', 1.5], ['rest', 0.5],
      ['G4', 0.5], ['A4', 0.5], ['G4', 0.5], ['F4', 0.5], ['E4', 1], ['C4', 1],
      ['G4', 0.5], ['A4', 0.5], ['G4', 0.5], ['F4', 0.5], ['E4', 1], ['C4', 1],
      ['C4', 1], ['G3', 1], ['C4', 1.5], ['rest', 0.5], ['C4', 1], ['G3', 1], ['C4', 1.5], ['rest', 0.5],
    ],
    lyrics: 'Frè-re Jac-ques, frè-re Jac-ques, dor-mez vous? dor-mez vous? Son-nez les ma-ti-nes, son-nez les ma-ti-nes, ding dang dong, ding dang dong',
    chords: [
      ['C', 4], ['C', 4], ['C', 4], ['C', 4],
      ['C', 4], ['C', 4],
      ['C', 1], ['G', 1], ['C', 2], ['C', 1], ['G', 1], ['C', 2],
    ],
    look: { animal: 'cat', backgroundTop: '#a8edea', backgroundBottom: '#5b86e5', fur: '#9e9e9e', accent: '#ffffff' },
  },
  {
    id: '4',
    name: 'Row, Row, Row Your Boat',
    description: 'A lilting boating song that rocks along in six-eight.',
    tempoBpm: 90,
    beatsPerBar: 3,
    pulseBeats: 1.5,
    notes: [
      ['C4', 1.5], ['C4', 1.5], ['C4', 1], ['D4', 0.5], ['E4', 1.5],
      ['E4', 1], ['D4', 0.5], ['E4', 1], ['F4', 0.5], ['G4', 2.5], ['rest', 0.5],
      ['C5', 0.5], ['C5', 0.5], ['C5', 0.5], ['G4', 0.5], ['G4', 0.5], ['G4', 0.5],
      ['E4', 0.5], ['E4', 0.5], ['E4', 0.5], ['C4', 0.5], ['C4', 0.5], ['C4', 0.5],
      ['G4', 1], ['F4', 0.5], ['E4', 1], ['D4', 0.5], ['C4', 2.5], ['rest', 0.5],
    ],
    lyrics: 'Row, row, row your boat, gent-ly down the stream, mer-ri-ly, mer-ri-ly, mer-ri-ly, mer-ri-ly, life is but a dream',
    chords: [
      ['C', 3], ['C', 3], ['C', 3], ['C', 3],
      ['C', 3], ['C', 3], ['G7', 3], ['C', 3],
    ],
    look: { animal: 'dog', backgroundTop: '#43cea2', backgroundBottom: '#185a9d', fur: '#f5f5f5', accent: '#3b2f2f' },
  },
  {
    id: '5',
    name: 'Jingle Bells',
    description: 'The sleigh-ride chorus, bright and bouncy.',
    tempoBpm: 150,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['E4', 1], ['E4', 1], ['E4', 1.5], ['rest', 0.5], ['E4', 1], ['E4', 1], ['E4', 1.5], ['rest', 0.5],
      ['E4', 1], ['G4', 1], ['C4', 1.5], ['D4', 0.5], ['E4', 3], ['rest', 1],
      ['F4', 1], ['F4', 1], ['F4', 1.5], ['F4', 0.5], ['F4', 1], ['E4', 1], ['E4', 1], ['E4', 0.5], ['E4', 0.5],
      ['G4', 1], ['G4', 1], ['F4', 1], ['D4', 1], ['C4', 3], ['rest', 1],
    ],
    lyrics: 'Jin-gle bells, jin-gle bells, jin-gle all the way, oh what fun it is to ride in a one horse o-pen sleigh',
    chords: [
      ['C', 4], ['C', 4], ['C', 4], ['C', 4],
      ['F', 4], ['C', 4], ['G7', 4], ['C', 4],
    ],
    look: { animal: 'cat', backgroundTop: '#c31432', backgroundBottom: '#240b36', fur: '#3a3a3a', accent: '#9be15d' },
  },
  {
    id: '6',
    name: 'Old MacDonald',
    description: 'Old MacDonald had a farm, and now a singing pet too.',
    tempoBpm: 132,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['G4', 1], ['G4', 1], ['G4', 1], ['D4', 1], ['E4', 1], ['E4', 1], ['D4', 1.5], ['rest', 0.5],
      ['B4', 1], ['B4', 1], ['A4', 1], ['A4', 1], ['G4', 2.5], ['rest', 0.5], ['D4', 1],
      ['G4', 1], ['G4', 1], ['G4', 1], ['D4', 1], ['E4', 1], ['E4', 1], ['D4', 1.5], ['rest', 0.5],
      ['B4', 1], ['B4', 1], ['A4', 1], ['A4', 1], ['G4', 3], ['rest', 1],
    ],
    lyrics: 'Old Mac-Don-ald had a farm, E-I-E-I-O, and on his farm he had a cow, E-I-E-I-O',
    chords: [
      ['G', 4], ['C', 2], ['G', 2], ['G', 2], ['D7', 2], ['G', 4],
      ['G', 4], ['C', 2], ['G', 2], ['G', 2], ['D7', 2], ['G', 4],
    ],
    look: { animal: 'dog', backgroundTop: '#f9d423', backgroundBottom: '#7cb342', fur: '#8d5524', accent: '#ffffff' },
  },
  {
    id: '7',
    name: 'Au Clair de la Lune',
    description: 'A tender French moonlight song.',
    tempoBpm: 112,
    beatsPerBar: 4,
    pulseBeats: 1,
    notes: [
      ['C4', 1], ['C4', 1], ['C4', 1], ['D4', 1], ['E4', 2], ['D4', 2],
      ['C4', 1], ['E4', 1], ['D4', 1], ['D4', 1], ['C4', 3], ['rest', 1],
      ['C4', 1], ['C4', 1], ['C4', 1], ['D4', 1], ['E4', 2], ['D4', 2],
      ['C4', 1], ['E4', 1], ['D4', 1], ['D4', 1], ['C4', 3], ['rest', 1],
    ],
    lyrics: 'Au clair de la lu-ne, mon a-mi Pier-rot, prê-te-moi ta plu-me pour é-crire un mot',
    chords: [
      ['C', 4], ['C', 2], ['G', 2], ['C', 2], ['G7', 2], ['C', 4],
      ['C', 4], ['C', 2], ['G', 2], ['C', 2], ['G7', 2], ['C', 4],
    ],
    look: { animal: 'cat', backgroundTop: '#0f2027', backgroundBottom: '#2c5364', fur: '#ffffff', accent: '#f6e27f' },
  },
];
