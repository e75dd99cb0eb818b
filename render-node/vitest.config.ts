import { defineConfig } from 'vitest/config';

// The render node's tests need neither Temporal nor SeaweedFS, so they can run without the root
// globalSetup: `npx vitest run --config render-node/vitest.config.ts`. The root config runs them too.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
