import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

/**
 * Bundles the workflow code ahead of time, so production control workers start without webpack
 * (set WORKFLOW_BUNDLE_PATH to the file this writes). The tracing interceptors are bundled with it: a control worker
 * that traces (OTEL_* variables) exports the workflows' spans, and one that does not drops them.
 */
const output = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'workflow-bundle.js');
const { code } = await bundleWorkflowCode({
  workflowsPath: fileURLToPath(import.meta.resolve('../src/workflows/index.ts')),
  workflowInterceptorModules: [fileURLToPath(import.meta.resolve('../src/workflows/interceptors.ts'))],
});
await mkdir(dirname(output), { recursive: true });
await writeFile(output, code);
console.log(`Wrote the workflow bundle to ${output} (${(code.length / 1024).toFixed(0)} KiB)`);
