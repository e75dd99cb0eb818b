import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.venv/**', '.data/**', 'coverage/**', '**/.scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // The web app: the rules of hooks and complete effect dependencies (React's own lint rules, flat config).
  { files: ['dashboard/src/**/*.{ts,tsx}'], ...reactHooks.configs.flat.recommended },
  {
    files: ['**/cli/**', '**/bin/**', '**/bench/**', 'test/**', '**/scripts/**', 'sdk/examples/**'],
    rules: { 'no-console': 'off' },
  },
  // Package boundaries: workflows (the contract and shared helpers) imports neither of the others; render nodes
  // never import the control plane; the control plane imports render-node only to start the embedded render
  // worker. Anything both sides need lives in @petsing/workflows. Tests may import any package.
  {
    files: ['workflows/src/**', 'workflows/scripts/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/control-plane', '@petsing/control-plane/*', '@petsing/render-node', '@petsing/render-node/*'], message: 'workflows is the shared bottom layer: it imports neither the control plane nor render-node.' }] }] },
  },
  {
    files: ['render-node/src/**', 'render-node/scripts/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/control-plane', '@petsing/control-plane/*'], message: 'render nodes never load control-plane code; shared helpers live in @petsing/workflows.' }] }] },
  },
  // The SDK is what integrators install: at run time it loads nothing of the service (its types are generated
  // from the OpenAPI document at build time, by sdk/scripts).
  {
    files: ['sdk/src/**', 'sdk/examples/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/control-plane', '@petsing/control-plane/*', '@petsing/render-node', '@petsing/render-node/*', '@petsing/workflows', '@petsing/workflows/*', '**/control-plane/**', '**/render-node/**', '**/workflows/**'], message: 'the SDK runs without the service\'s code: use the generated schema types.' }] }] },
  },
  {
    files: ['control-plane/src/**'],
    ignores: ['control-plane/src/runtime/start-service.ts', 'control-plane/src/cli/main.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/render-node', '@petsing/render-node/*'], message: 'the control plane imports render-node only to start the embedded render worker (runtime/start-service.ts, cli/main.ts); shared helpers live in @petsing/workflows.' }] }] },
  },
);
