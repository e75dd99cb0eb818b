import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger } from '@temporalio/worker';
import { bundleWorkflows } from '../src/bundle.ts';

/**
 * Bundles the workflow code ahead of time, so production control workers start without webpack (set
 * WORKFLOW_BUNDLE_PATH to the file this writes). Without one, a control worker keeps a bundle in DATA_DIR.
 * It logs as the service does, one JSON line per event (webpack's report, at debug, only with LOG_LEVEL=DEBUG).
 */
const logger = new DefaultLogger(process.env.LOG_LEVEL?.toUpperCase() === 'DEBUG' ? 'DEBUG' : 'INFO', ({ level, message, meta }) =>
  console.log(JSON.stringify({ level: level.toLowerCase(), time: Date.now(), msg: message, ...meta })),
);
const output = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'workflow-bundle.js');
const code = await bundleWorkflows(logger);
await mkdir(dirname(output), { recursive: true });
await writeFile(output, code);
logger.info('wrote the workflow bundle', { path: output, kib: Math.round(code.length / 1024) });
