import type { KnipConfig } from 'knip';

/**
 * Dead-code check (`npm run lint:unused`). Entry files are the ways code is loaded from outside the import graph.
 * Knip already takes these from the project (and reports a listed duplicate as a configuration hint), so they
 * are not repeated below:
 * - package.json `bin`: control-plane/bin/petsing.mjs and render-node/bin/render-node.mjs (each registers tsx and
 *   imports its src/cli/main.ts, which knip follows);
 * - package.json `exports`: workflows/src/{index,workflows/index,workflows/interceptors,media/index,api-rules}.ts,
 *   platform/src/{storage,runtime,tools,metrics,tracing}/index.ts and platform/src/runtime/config.ts, render-node/src/index.ts, and sdk/src/index.ts (the source of
 *   sdk's ./dist/index.js);
 * - the Temporal plugin: workflows/src/workflows/index.ts, the module workers load by path (workflowsPath /
 *   bundleWorkflowCode) and whose exported functions Temporal starts by name;
 * - the Vitest plugin (vitest.config.ts, render-node/vitest.config.ts): the test files and test/global-setup.ts;
 * - the Vite plugin: dashboard/index.html, which loads dashboard/src/main.tsx.
 * The generated API types (dashboard/src/api/schema.d.ts, sdk/src/schema.ts, written by each workspace's
 * scripts/generate-api-types.ts) are git-ignored, so knip reads but never reports them.
 */
const config: KnipConfig = {
  workspaces: {
    '.': {
      entry: [
        // Benchmarks, run by `npm run bench:*` through tsx.
        'test/bench/*.bench.ts',
        // Spawned by path from test/bench/api.bench.ts (a child process that serves the API under load).
        'test/bench/api-bench-server.ts',
      ],
      project: ['*.{ts,js}', 'test/**/*.ts'],
      // Run as `npx --no-install redocly lint` by control-plane/test/service-endpoints.test.ts (through a spawn
      // helper knip cannot read).
      ignoreDependencies: ['@redocly/cli'],
    },
    platform: {
      project: ['src/**/*.ts', 'test/**/*.ts'],
    },
    workflows: {
      // `npm run bundle:workflows` (tsx).
      entry: ['scripts/*.ts'],
      project: ['src/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    },
    'control-plane': {
      // Kysely's Migrator calls `up`/`down` of each module listed in src/db/migrations/index.ts.
      entry: ['src/db/migrations/*.ts'],
      project: ['bin/*.mjs', 'src/**/*.ts', 'test/**/*.ts'],
    },
    'render-node': {
      // `npm run bench:cuda`, `bench:detect`, `frames:species` (tsx). training/ is Python and shell only.
      entry: ['scripts/*.ts'],
      project: ['bin/*.mjs', 'src/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    },
    dashboard: {
      // `npm run generate:api` and `npm run size:dashboard` (tsx).
      entry: ['scripts/*.ts'],
      project: ['src/**/*.{ts,tsx}', 'scripts/**/*.ts'],
    },
    sdk: {
      entry: [
        // `npm run generate:api --workspace sdk` (tsx).
        'scripts/*.ts',
        // Documented in the README and run by path from sdk/test/sdk.test.ts.
        'examples/*.ts',
      ],
      project: ['src/**/*.ts', 'scripts/**/*.ts', 'examples/**/*.ts', 'test/**/*.ts'],
    },
  },
  // System tools started through child_process, not npm packages.
  ignoreBinaries: [
    'ffmpeg',
    // Prometheus' rule checker (Debian's prometheus package), run by test/ops-rules.test.ts.
    'promtool',
    // schemathesis' CLI, run by test/api-contract-fuzz.test.ts.
    'st',
  ],
};

export default config;
