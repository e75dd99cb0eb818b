import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startScratchSweep, type RenderRecord } from '../render-node/src/scratch.ts';
import { removeAbandonedScratchFolders } from '../control-plane/src/media/scratch-folders.ts';

/**
 * Scratch folders of work that no longer runs (a render node or API killed mid-work) are removed, and only
 * those: a folder that names its process goes as soon as that process is gone and stays while it runs; the age
 * gate keeps the folders of work still running that name none; each process sweeps only its own kinds.
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
    const sweep = startScratchSweep({ info: (message, fields) => logged.push({ message, ...fields }), warn: () => {}, error: () => {} }, { root });
    await sweep.stop();
    expect((await readdir(root)).sort()).toEqual(['petsing-render-a-file', 'petsing-render-running', 'petsing-upload-old']);
    expect(logged).toEqual([{ message: 'removed scratch folders of renders that no longer run', removed: 2 }]);
  });

  it('removes the folder of a render node killed mid-render at once, young as it is, handing its render back, and keeps it while that node runs', async () => {
    // A real process makes its render folder (and the MP4 it is writing) the way a render does, and is killed.
    const node = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', [
        `import { writeFile } from 'node:fs/promises';`,
        `import { createScratchDirectory } from ${JSON.stringify(join(import.meta.dirname, '..', 'platform', 'src', 'tools', 'scratch-directory.ts'))};`,
        `const folder = await createScratchDirectory('petsing-render');`,
        `await writeFile(folder + '/output.mp4', 'partial');`,
        `await writeFile(folder + '/render.json', JSON.stringify({ taskToken: Buffer.from('a task token').toString('base64'), videoId: 'v1', workflowId: 'render-v1' }));`,
        `console.log(folder);`,
        `setInterval(() => {}, 1000);`,
      ].join('\n')],
      { env: { ...process.env, TMPDIR: root }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [made] = (await once(node.stdout!, 'data')) as [Buffer];
    const name = made.toString().trim().split('/').at(-1)!;
    // A folder naming this test's pid with another start time: a pid the kernel gave again after its owner died.
    await folder(`petsing-render-${process.pid}.1-Ab12Cd`, minutesAgo(1));
    const logged: unknown[] = [];
    const logger = { info: (message: string, fields?: object) => logged.push({ message, ...fields }), warn: () => {}, error: () => {} };

    // Each render left by a node that died is handed back with the task token its folder holds, never a running one's.
    const handedBack: unknown[] = [];
    const renderLeft = ({ taskToken, ...render }: RenderRecord) => handedBack.push({ taskToken: Buffer.from(taskToken).toString(), ...render });

    await startScratchSweep(logger, { root, renderLeft }).stop();
    expect(await readdir(root)).toContain(name);
    expect(logged).toEqual([{ message: 'removed scratch folders of renders that no longer run', removed: 1 }]);
    expect(handedBack).toEqual([]);

    node.kill('SIGKILL');
    await once(node, 'exit');
    await startScratchSweep(logger, { root, renderLeft }).stop();
    expect((await readdir(root)).filter((entry) => entry.startsWith('petsing-'))).toEqual([]);
    expect(logged).toHaveLength(2);
    expect(handedBack).toEqual([{ taskToken: 'a task token', videoId: 'v1', workflowId: 'render-v1' }]);
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
