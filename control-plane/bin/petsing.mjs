#!/usr/bin/env node
// The operator CLI. TypeScript sources run through tsx, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();

// Tracing (docs/operations.md, "Traces"): a service command starts OpenTelemetry when the OTEL_* variables turn it on,
// before the CLI and the modules it instruments (node:http, Express, pg) load; otherwise nothing of it is loaded.
const SERVICES = { serve: 'petsing', api: 'petsing-api', 'worker control': 'petsing-control-worker', 'worker render': 'petsing-render-node' };
const [command, part] = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const service = command === 'worker' ? `worker ${part}` : command;
const serviceName = Object.hasOwn(SERVICES, service) ? SERVICES[service] : undefined;
if (serviceName) {
  const { startTracing } = await import('@petsing/platform/tracing');
  try {
    await startTracing({ serviceName });
  } catch (error) {
    if (error?.name !== 'ConfigError') throw error;
    console.error(error.message);
    process.exit(78);
  }
}

await import('../src/cli/main.ts');
