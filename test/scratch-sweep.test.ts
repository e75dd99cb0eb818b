import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startScratchSweep } from '../render-node/src/scratch.ts';
import { removeAbandonedScratchFolders } from '../control-plane/src/media/scratch-folders.ts';

/**
 * Scratch folders of work that no longer runs (a render node or API killed mid-work) are removed, and only
 * those: the age gate keeps the folders of work still running, and each process sweeps only its own kinds.
 */
describe('the scratch sweep', () => {
  let root: string;
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  const folder = async (name: string, changed: Date, files: Record<string, string> = {}) => {
    const path = join(root, name);
    await mkdir(path);
    for (const [file, body] of Object.entries(files)) await writeFile(join(path, file), body);
    await utimes(path, changed, changed);
  };
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'scratch-sweep-test-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('removes a render node\'s folders of renders that stopped 30 minutes ago, keeps running ones and other kinds', async () => {
    await folder('petsing-render-killed', minutesAgo(45), { 'output.mp4': 'partial', image: 'photo' });
    await folder('petsing-detect-killed', minutesAgo(31));
    await folder('petsing-render-running', minutesAgo(14), { 'output.mp4': 'growing' });
    await folder('petsing-upload-old', minutesAgo(120));
    await writeFile(join(root, 'petsing-render-a-file'), 'not a folder');
    await utimes(join(root, 'petsing-render-a-file'), minutesAgo(60), minutesAgo(60));

    const logged: unknown[] = [];
    const sweep = startScratchSweep({ info: (message, fields) => logged.push({ message, ...fields }), warn: () => {}, error: () => {} }, root);
    await sweep.stop();
    expect((await readdir(root)).sort()).toEqual(['petsing-render-a-file', 'petsing-render-running', 'petsing-upload-old']);
    expect(logged).toEqual([{ message: 'removed scratch folders of renders that no longer run', removed: 2 }]);
  });

  it('removes the control plane\'s abandoned upload, speech, soundtrack and audio folders older than the cut-off', async () => {
    for (const prefix of ['petsing-upload', 'petsing-speech', 'petsing-soundtrack', 'petsing-audio']) {
      await folder(`${prefix}-old`, minutesAgo(90));
      await folder(`${prefix}-new`, minutesAgo(5));
    }
    await folder('petsing-render-old', minutesAgo(90));
    expect(await removeAbandonedScratchFolders(minutesAgo(60), root)).toBe(4);
    expect((await readdir(root)).sort()).toEqual(['petsing-audio-new', 'petsing-render-old', 'petsing-soundtrack-new', 'petsing-speech-new', 'petsing-upload-new']);
  });
});
