import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type Logger, type LogLevel } from '@temporalio/worker';

const SOURCES = fileURLToPath(new URL('.', import.meta.url));
/** The lockfile of the checkout: the versions of what the bundle takes from node_modules. */
const LOCKFILE = fileURLToPath(new URL('../../package-lock.json', import.meta.url));

/**
 * The workflow code bundled for a control worker, with the tracing interceptors: a worker that traces exports the
 * workflows' spans, and one that does not drops them. What the bundler says goes to `logger`, one line per event
 * (bundlerLines).
 */
export async function bundleWorkflows(logger: Logger): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(import.meta.resolve('./workflows/index.ts')),
    workflowInterceptorModules: [fileURLToPath(import.meta.resolve('./workflows/interceptors.ts'))],
    logger: bundlerLines(logger),
  });
  return code;
}

/**
 * The bundler logs webpack's report (a table of many lines: assets, modules, "compiled successfully") as one
 * message, which a log of JSON lines would carry as a block of text in the middle of its events. Here the report is
 * a field of one line instead: at debug when webpack succeeded (the bundler's own "Workflow bundle created", with
 * its size, says so at info), at error when it failed. Every other line passes as it is.
 */
function bundlerLines(logger: Logger): Logger {
  const log = (level: LogLevel, message: string, meta?: Record<string, unknown>) => {
    if (!message.includes('\n')) return logger.log(level, message, meta);
    if (level === 'ERROR') return logger.error('webpack could not bundle the workflow code', { ...meta, report: message });
    return logger.debug('webpack bundled the workflow code', { ...meta, report: message });
  };
  const at = (level: LogLevel) => (message: string, meta?: Record<string, unknown>) => log(level, message, meta);
  return { log, trace: at('TRACE'), debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
}

/**
 * The bundle kept in `folder` under a hash of what goes into it (every file of the workflow package's sources and
 * the lockfile), bundled only when that changed rather than at every start (webpack takes a second or more).
 * Answers the bundle's path; bundles of older sources in `folder` are removed. The bundler logs to `logger`.
 */
export async function cachedWorkflowBundle(folder: string, logger: Logger): Promise<string> {
  const name = `workflow-bundle-${await sourcesHash()}.js`;
  const path = join(folder, name);
  if (await stat(path).then((found) => found.isFile(), () => false)) return path;
  const code = await bundleWorkflows(logger);
  await mkdir(folder, { recursive: true });
  // Written whole, then renamed: a worker beside this one never reads half a bundle.
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, code);
  await rename(partial, path);
  for (const entry of await readdir(folder)) {
    if (entry !== name && entry.startsWith('workflow-bundle-') && entry.endsWith('.js')) await rm(join(folder, entry), { force: true });
  }
  return path;
}

async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(SOURCES, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)).sort();
  for (const file of [...files, LOCKFILE]) {
    hash.update(file.slice(SOURCES.length)).update('\0');
    hash.update(await readFile(file).catch(() => Buffer.alloc(0))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}
