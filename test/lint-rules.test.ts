import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The checks `npm run lint` adds to ESLint's own (docs/architecture.md) fail on what they are there to catch. */
describe('lint rules', () => {
  const eslint = new ESLint({ cwd: process.cwd() });
  const restrictedImports = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return result!.messages.filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports').map((message) => message.message);
  };

  it('refuse an import against the control plane\'s layers', async () => {
    const upward = await restrictedImports(
      'control-plane/src/services/layer-probe.ts',
      "import { RenderScheduler } from '../temporal/render-scheduler.ts';\nimport { apiPresenter } from '../presenters/api.presenter.ts';\nexport const probe = [RenderScheduler, apiPresenter];\n",
    );
    expect(upward).toHaveLength(2);
    expect(upward[0]).toContain('control-plane/src/services may import');
    // A repository may not reach a service; an adapter may implement a service's port.
    expect(await restrictedImports('control-plane/src/repositories/layer-probe.ts', "import { VideoService } from '../services/video.service.ts';\nexport const probe = VideoService;\n")).toHaveLength(1);
    expect(await restrictedImports('control-plane/src/temporal/layer-probe.ts', "import type { RenderScheduling } from '../services/ports/render-scheduling.ts';\nexport type Probe = RenderScheduling;\n")).toEqual([]);
    // Routes may take the AppContext's type from the composition root, but not its code.
    expect(await restrictedImports('control-plane/src/http/layer-probe.ts', "import type { AppContext } from '../runtime/app-context.ts';\nexport type Probe = AppContext;\n")).toEqual([]);
    expect(await restrictedImports('control-plane/src/http/layer-probe.ts', "import { createServices } from '../runtime/app-context.ts';\nexport const probe = createServices;\n")).toHaveLength(1);
  });

  describe('on a scratch tree', () => {
    let directory: string;
    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'petsing-lint-'));
      await writeFile(join(directory, 'package.json'), JSON.stringify({ name: 'lint-probe', private: true, type: 'module', main: 'index.ts' }));
      await writeFile(join(directory, 'index.ts'), "import { used } from './lib.ts';\nexport const start = used;\n");
      await writeFile(join(directory, 'lib.ts'), "import { start } from './index.ts';\nexport const used = 1;\nexport const unused = () => start;\n");
    });
    afterAll(() => rm(directory, { recursive: true, force: true }));

    const run = (command: string, args: string[]) => spawnSync('npx', ['--no-install', command, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

    it('madge, run as lint:cycles runs it, fails on an import cycle', () => {
      // The script's own flags (everything before its folders), on the scratch folder.
      const script = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts['lint:cycles']!.split(' ');
      const flags = script.slice(1, script.findIndex((word, index) => index > 0 && !word.startsWith('--') && !script[index - 1]!.startsWith('--')));
      expect(flags).toContain('--circular');
      const cycle = run('madge', [...flags, directory]);
      expect(cycle.status).toBe(1);
      expect(cycle.stdout).toContain('index.ts > lib.ts');
    });

    it('knip fails on an export nothing imports', () => {
      const unused = run('knip', ['--no-progress', '--directory', directory, '--include', 'exports']);
      expect(unused.status).toBe(1);
      expect(unused.stdout).toMatch(/unused\s+lib\.ts/);
    });
  });
});
