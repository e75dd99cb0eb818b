import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderError } from '../src/errors.ts';
import { decodeImage, type RgbImage } from '../src/image-decoder.ts';
import { bundledPetFaceModel } from '../src/pet-face-model.ts';
import { DetectionFailure, faceLength, type PetFace, type Point } from '../src/pet-face.ts';
import { loadAnnotations, PETS } from './pet-annotations.ts';
import { renderSamplePet } from '../src/sample-pet.ts';
import { tempDir } from './helpers.ts';

let dir: string;
let pet: Buffer;

beforeAll(async () => {
  dir = await tempDir('images');
  pet = await renderSamplePet(384);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function pixel(image: RgbImage, x: number, y: number): number[] {
  const i = (y * image.width + x) * 3;
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
}

async function rejection(promise: Promise<unknown>): Promise<RenderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RenderError);
  return error as RenderError;
}

describe('image decoding', () => {
  it.each([
    ['jpeg', (s: Sharp) => s.jpeg({ quality: 90 })],
    ['png', (s: Sharp) => s.png()],
    ['webp', (s: Sharp) => s.webp({ quality: 90 })],
  ])('decodes %s', async (format, encode) => {
    const path = join(dir, `pet.${format}`);
    await encode(sharp(pet)).toFile(path);
    const image = await decodeImage(path);
    expect([image.format, image.width, image.height, image.decoder]).toEqual([format, 384, 384, 'sharp']);
    // The nose is dark, the muzzle below it pale: the picture survived decoding.
    expect(Math.max(...pixel(image, 192, 204))).toBeLessThan(80);
    expect(Math.min(...pixel(image, 192, 240))).toBeGreaterThan(150);
  });

  it('decodes HEIC (HEVC) through heif-convert, since the prebuilt sharp has no HEVC decoder', async () => {
    const path = join(import.meta.dirname, 'fixtures', 'sample-pet.heic');
    const metadata = await sharp(path).metadata();
    expect([metadata.format, metadata.compression]).toEqual(['heif', 'hevc']);
    const image = await decodeImage(path);
    expect([image.format, image.decoder, image.width, image.height]).toEqual(['heic', 'heif-convert', 384, 384]);
    expect(Math.max(...pixel(image, 192, 204))).toBeLessThan(90);
    expect(Math.min(...pixel(image, 192, 240))).toBeGreaterThan(140);
  });

  it('honours EXIF orientation', async () => {
    // 64×32, left half red, right half blue, stored with orientation 6 (display rotated 90° clockwise).
    const raw = Buffer.alloc(64 * 32 * 3);
    for (let y = 0; y < 32; y++) for (let x = 0; x < 64; x++) raw.set(x < 32 ? [220, 20, 20] : [20, 20, 220], (y * 64 + x) * 3);
    const path = join(dir, 'rotated.jpg');
    await sharp(raw, { raw: { width: 64, height: 32, channels: 3 } }).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toFile(path);
    const image = await decodeImage(path);
    expect([image.width, image.height]).toEqual([32, 64]);
    // Rotated clockwise, the left (red) half is on top.
    expect(pixel(image, 16, 8)[0]).toBeGreaterThan(180);
    expect(pixel(image, 16, 56)[2]).toBeGreaterThan(180);
  });

  it('refuses a truncated image with a permanent image_undecodable', async () => {
    const jpeg = await sharp(pet).jpeg().toBuffer();
    const path = join(dir, 'truncated.jpg');
    await writeFile(path, jpeg.subarray(0, Math.floor(jpeg.length / 2)));
    const error = await rejection(decodeImage(path));
    expect([error.code, error.permanent]).toEqual(['image_undecodable', true]);
    expect(error.hint).toMatch(/damaged|incomplete/);
  });

  it('refuses a decompression bomb before decoding it', async () => {
    // A valid 30000×30000 greyscale PNG of zeros: about 100 KB on disk, 900 megapixels decoded.
    const side = 30_000;
    const header = Buffer.alloc(13);
    header.writeUInt32BE(side, 0);
    header.writeUInt32BE(side, 4);
    header.set([1, 0, 0, 0, 0], 8); // 1-bit greyscale
    const rows = Buffer.alloc((1 + side / 8) * side);
    const chunk = (type: string, data: Buffer) => {
      const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(body));
      return Buffer.concat([length, body, crc]);
    };
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
    const path = join(dir, 'bomb.png');
    await writeFile(path, png);
    expect(png.length).toBeLessThan(1_000_000);
    const started = performance.now();
    const error = await rejection(decodeImage(path));
    expect([error.code, error.permanent]).toEqual(['image_too_large', true]);
    expect(error.message).toContain('30000×30000');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses a file that is no image at all', async () => {
    const path = join(dir, 'notes.png');
    await writeFile(path, 'not a picture');
    const error = await rejection(decodeImage(path));
    expect(error.code).toBe('image_undecodable');
  });
});

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

async function rgb(input: Buffer | Sharp): Promise<RgbImage> {
  const { data, info } = await (Buffer.isBuffer(input) ? sharp(input) : input).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

/** A room: a pale wall with a darker floor, both running off the sides, as behind many pet photos. */
function room(width: number, height: number): Sharp {
  return sharp(
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
      <defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#d9d4c7"/><stop offset="0.7" stop-color="#cfc8b8"/><stop offset="1" stop-color="#a89f8c"/></linearGradient></defs>
      <rect width="${width}" height="${height}" fill="url(#g)"/></svg>`),
  );
}

function expectMouth(found: PetFace | DetectionFailure, x: number, y: number, tolerance: number): void {
  expect(found).not.toBeInstanceOf(DetectionFailure);
  const face = found as PetFace;
  expect(Math.hypot(face.mouth[0] - x, face.mouth[1] - y)).toBeLessThan(tolerance);
  expect(face.confidence).toBeGreaterThanOrEqual(0.3);
}

/** A real cat (shared/pets) with its annotation: the pet-face model's cases are built from it. */
const CAT = 'cat-02.jpg';

describe('the pet-face model on transformed real photos', () => {
  let cat: Buffer;
  let mouth: Point;
  let unit: number;
  beforeAll(async () => {
    cat = await readFile(join(PETS, CAT));
    const annotation = (await loadAnnotations(PETS))[CAT]!;
    mouth = annotation.mouth!;
    unit = faceLength({ eyes: annotation.eyes!, chin: annotation.chin! });
  });
  const detect = async (image: RgbImage) => (await bundledPetFaceModel()).detect(image);

  it('finds a small pet off-centre in a large photo', async () => {
    // The 1280 px photo shrunk to 600 px and pasted into a 2400 × 1600 room: the face is a sixteenth of the photo's
    // width. (Shrunk to 400 px on a plain wall the model doubts it: the model card's known failures.)
    const scale = 600 / 1280;
    const photo = await room(2400, 1600).composite([{ input: await sharp(cat).resize(600).toBuffer(), left: 1600, top: 800 }]).png().toBuffer();
    expectMouth(await detect(await rgb(photo)), 1600 + mouth[0] * scale, 800 + mouth[1] * scale, 0.35 * unit * scale);
  });

  it('finds the face upside down and on its side', async () => {
    const { width, height } = (await sharp(cat).metadata()) as { width: number; height: number };
    const upside = await rgb(sharp(cat).rotate(180));
    expectMouth(await detect(upside), width - mouth[0], height - mouth[1], 0.35 * unit);
    const side = await rgb(sharp(cat).rotate(90));
    expectMouth(await detect(side), height - mouth[1], mouth[0], 0.35 * unit);
  });

  it('gives up on photos without a pet', async () => {
    const landscape = sharp(
      Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600">
        <rect width="800" height="330" fill="#8fb8e0"/><rect y="330" width="800" height="270" fill="#4f8a3a"/><circle cx="620" cy="110" r="40" fill="#fff3b0"/></svg>`),
    );
    const noise = Buffer.alloc(300 * 300 * 3);
    let seed = 12345;
    for (let i = 0; i < noise.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      noise[i] = seed >> 23;
    }
    const cases: RgbImage[] = [
      await rgb(landscape),
      { width: 300, height: 300, data: noise },
      { width: 300, height: 300, data: Buffer.alloc(300 * 300 * 3, 128) },
    ];
    for (const image of cases) expect(await detect(image)).toBeInstanceOf(DetectionFailure);
  });
});

describe('HEIC', () => {
  it('decodes the HEIC fixture (the sample pet) to the picture it was made from', async () => {
    const image = await decodeImage(join(import.meta.dirname, 'fixtures', 'sample-pet.heic'));
    const original = await rgb(sharp(await renderSamplePet(384)).flatten({ background: '#ecece8' }));
    expect([image.width, image.height]).toEqual([original.width, original.height]);
    let difference = 0;
    for (let i = 0; i < image.data.length; i++) difference += Math.abs(image.data[i]! - original.data[i]!);
    // heif-enc -q 60: a lossy copy, close on average.
    expect(difference / image.data.length).toBeLessThan(8);
    expect((await readFile(join(import.meta.dirname, 'fixtures', 'sample-pet.heic'))).length).toBeLessThan(20_000);
  });
});
