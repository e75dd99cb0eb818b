import { defineConfig } from 'vitest/config';

// One Temporal dev server and one S3 server per run (started in test/global-setup.ts);
// each test file creates its own database.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'control-plane/test/**/*.test.ts', 'render-node/test/**/*.test.ts', 'platform/test/**/*.test.ts', 'workflows/test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
