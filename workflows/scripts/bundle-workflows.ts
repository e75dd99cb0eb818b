import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflows } from '../src/bundle.ts';

/**
 * Bundles the workflow code ahead of time, so production control workers start without webpack (set
 * WORKFLOW_BUNDLE_PATH to the file this writes). Without one, a control worker keeps a bundle in DATA_DIR.
 */
const output = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'workflow-bundle.js');
const code = await bundleWorkflows();
await mkdir(dirname(output), { recursive: true });
await writeFile(output, code);
console.log(`Wrote the workflow bundle to ${output} (${(code.length / 1024).toFixed(0)} KiB)`);
