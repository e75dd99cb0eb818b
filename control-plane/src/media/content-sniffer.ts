/**
 * Identifies a download by its leading bytes. Headers and extensions are chosen by whoever serves the URL,
 * so they decide nothing here.
 *
 * Deliberately not a general detector such as file-type: we need a closed allow-list of a dozen formats,
 * each a fixed signature at a fixed offset, and reading a bounded prefix with no loops keeps it auditable
 * and free of parser bugs. A file that passes still goes through the real decoder (sharp or ffmpeg), which
 * is what actually proves it is well-formed.
 */

export type AcceptKind = 'image' | 'media';

/** Bytes needed to decide; a shorter body is judged on what it has. */
export const SNIFF_BYTES = 64;

const HEIC_BRANDS: Readonly<Record<string, string>> = {
  heic: 'image/heic', heix: 'image/heic', heim: 'image/heic', heis: 'image/heic',
  hevc: 'image/heic-sequence', hevx: 'image/heic-sequence', hevm: 'image/heic-sequence', hevs: 'image/heic-sequence',
  mif1: 'image/heif', msf1: 'image/heif-sequence',
};

/** QuickTime files from before ftyp existed start with one of these atoms. */
const QUICKTIME_LEADING_ATOMS = new Set(['moov', 'mdat', 'wide', 'free', 'skip']);

const ascii = (bytes: Uint8Array, start: number, end: number): string =>
  bytes.length >= end ? Buffer.from(bytes.subarray(start, end)).toString('latin1') : '';

const startsWith = (bytes: Uint8Array, signature: readonly number[], offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, index) => bytes[offset + index] === byte);

function sniffImage(bytes: Uint8Array): string | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp';
  if (ascii(bytes, 4, 8) === 'ftyp') return HEIC_BRANDS[ascii(bytes, 8, 12)] ?? null;
  return null;
}

/** MPEG audio frame header (ISO 11172-3): 11 sync bits, then no reserved version, layer, bitrate or rate. */
function isMpegAudioFrame(bytes: Uint8Array): boolean {
  const [b0, b1, b2] = [bytes[0], bytes[1], bytes[2]];
  if (b0 !== 0xff || b1 === undefined || b2 === undefined || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 0b11;
  const layer = (b1 >> 1) & 0b11;
  const bitrate = b2 >> 4;
  const sampleRate = (b2 >> 2) & 0b11;
  return version !== 0b01 && layer !== 0b00 && bitrate !== 0b1111 && sampleRate !== 0b11;
}

/** AAC ADTS header: 12 sync bits, layer 00, and a sampling-frequency index that exists. */
function isAdtsFrame(bytes: Uint8Array): boolean {
  const [b0, b1, b2] = [bytes[0], bytes[1], bytes[2]];
  if (b0 !== 0xff || b1 === undefined || b2 === undefined) return false;
  return (b1 & 0xf6) === 0xf0 && ((b2 >> 2) & 0x0f) < 13;
}

function sniffMedia(bytes: Uint8Array): string | null {
  const boxType = ascii(bytes, 4, 8);
  if (boxType === 'ftyp') {
    const brand = ascii(bytes, 8, 12);
    if (brand === 'qt  ') return 'video/quicktime';
    if (brand === 'M4A ' || brand === 'M4B ') return 'audio/mp4';
    // HEIF shares the container; a still image is not a soundtrack.
    if (brand in HEIC_BRANDS || brand === 'avif' || brand === 'avis') return null;
    return 'video/mp4';
  }
  if (QUICKTIME_LEADING_ATOMS.has(boxType)) return 'video/quicktime';
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) {
    // The EBML header names its DocType within the first few dozen bytes.
    return Buffer.from(bytes.subarray(0, SNIFF_BYTES)).includes('webm', 0, 'latin1') ? 'video/webm' : 'video/x-matroska';
  }
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(bytes, 0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(bytes, 0, 3) === 'ID3') return 'audio/mpeg';
  // ADTS before MPEG audio: its layer bits are 00, which the MPEG check refuses anyway.
  if (isAdtsFrame(bytes)) return 'audio/aac';
  if (isMpegAudioFrame(bytes)) return 'audio/mpeg';
  return null;
}

/** The content type the leading bytes prove, or null when they are not an accepted format. */
export function sniffContentType(bytes: Uint8Array, accept: AcceptKind): string | null {
  return accept === 'image' ? sniffImage(bytes) : sniffMedia(bytes);
}
