import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedWorkflowBundle } from '../src/bundle.ts';

describe('the workflow bundle a control worker keeps in DATA_DIR', () => {
  let folder: string;
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('is bundled once for the same sources, with the tracing interceptors, and replaces a bundle of older sources', async () => {
    folder = await mkdtemp(join(tmpdir(), 'petsing-bundle-'));
    const older = join(folder, 'workflow-bundle-0000000000000000.js');
    await writeFile(older, '// a bundle of older workflow code');
    const logged: LogEntry[] = [];
    const logger = new DefaultLogger('TRACE', (entry) => logged.push(entry));
    const path = await cachedWorkflowBundle(folder, logger);
    expect(path).toMatch(/workflow-bundle-[0-9a-f]{16}\.js$/);
    expect(await readdir(folder)).toEqual([path.split('/').at(-1)]);
    const made = await stat(path);
    expect(await readFile(path, 'utf8')).toContain('OpenTelemetryInboundInterceptor');
    // What the bundler said reached the logger as events of one line: webpack's report a field of one at debug.
    expect(logged.map(({ level, message }) => `${level} ${message}`)).toEqual(['DEBUG webpack bundled the workflow code', 'INFO Workflow bundle created']);
    expect(logged[0]!.meta).toMatchObject({ report: expect.stringContaining('compiled successfully') });

    expect(await cachedWorkflowBundle(folder, logger)).toBe(path);
    expect((await stat(path)).mtimeMs).toBe(made.mtimeMs);
    expect(logged).toHaveLength(2);
  }, 60_000);
});
