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
  // Package boundaries: platform (object stores, the Temporal runtime, the tool runner) and workflows (the contract
  // and the workflow code) import none of ours; render nodes never import the control
  // plane; the control plane imports render-node only to start the embedded render worker. Anything both sides
  // need lives in @petsing/workflows or @petsing/platform. Tests may import any package.
  {
    files: ['platform/src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/*', '**/control-plane/**', '**/render-node/**', '**/workflows/**'], message: 'platform is the bottom layer: it imports no other petsing package.' }] }] },
  },
  {
    files: ['workflows/src/**', 'workflows/scripts/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/*', '**/control-plane/**', '**/render-node/**', '**/platform/**'], message: 'workflows (the contract, bundled into the Temporal sandbox) imports no other petsing package.' }] }] },
  },
  {
    files: ['render-node/src/**', 'render-node/scripts/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/control-plane', '@petsing/control-plane/*'], message: 'render nodes never load control-plane code; shared helpers live in @petsing/workflows.' }] }] },
  },
  // The SDK is what integrators install: at run time it loads nothing of the service (its types are generated
  // from the OpenAPI document at build time, by sdk/scripts).
  {
    files: ['sdk/src/**', 'sdk/examples/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/control-plane', '@petsing/control-plane/*', '@petsing/render-node', '@petsing/render-node/*', '@petsing/workflows', '@petsing/workflows/*', '@petsing/platform', '@petsing/platform/*', '**/control-plane/**', '**/render-node/**', '**/workflows/**', '**/platform/**'], message: 'the SDK runs without the service\'s code: use the generated schema types.' }] }] },
  },
  // The web app is bundled for browsers: of the service's code it loads only the browser-safe API rules (upload
  // limits, terminal statuses), which the control plane enforces from the same module.
  {
    files: ['dashboard/src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^(?!@petsing/workflows/api-rules$)(@petsing/|.*/(control-plane|render-node|workflows)/)', message: 'the web app runs in a browser: of the service\'s code it imports only @petsing/workflows/api-rules.' }] }] },
  },
  {
    files: ['control-plane/src/**'],
    ignores: ['control-plane/src/cli/main.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@petsing/render-node', '@petsing/render-node/*'], message: 'the control plane imports render-node only to run a render node (`petsing worker render`, cli/main.ts); shared helpers live in @petsing/workflows.' }] }] },
  },
  // Layers inside the control plane (docs/architecture.md): imports point down, never up. Services own the small
  // interfaces they need (services/ports) and the adapters implement them; presenters shape what services answer;
  // routes, MCP tools and activities call services; only the composition root (runtime/, cli/) sees everything.
  ...controlPlaneLayers({
    domain: { may: [] },
    config: { may: [] },
    logging: { may: [] },
    errors: { may: ['domain'] },
    db: { may: ['domain'] },
    repositories: { may: ['domain', 'db', 'errors', 'logging'] },
    templates: { may: ['domain', 'errors', 'logging'] },
    media: { may: ['domain', 'db', 'errors', 'config', 'logging'] },
    services: { may: ['domain', 'db', 'errors', 'config', 'logging', 'repositories', 'media', 'templates'] },
    presenters: { may: ['domain', 'db', 'services', 'templates'] },
    payments: { may: ['domain', 'db', 'errors', 'config', 'logging', 'services'] },
    email: { may: ['domain', 'services'] },
    temporal: { may: ['domain', 'db', 'errors', 'config', 'logging', 'media', 'templates', 'services'], types: ['runtime'] },
    // MCP is served over HTTP: the two are one surface (the MCP server is mounted at /mcp and shares /v1's schemas).
    http: { may: ['domain', 'db', 'errors', 'config', 'logging', 'media', 'templates', 'services', 'presenters', 'mcp'], types: ['runtime', 'repositories'] },
    mcp: { may: ['domain', 'db', 'errors', 'config', 'logging', 'media', 'services', 'presenters', 'http'], types: ['runtime'] },
    // The Prometheus adapter of the Metrics port (services/ports/metrics.ts).
    metrics: { may: ['services', 'config', 'logging'] },
  }),
);

/**
 * One config per control-plane folder: an import of any other control-plane folder than those it `may` import
 * (or import `types` from) is an error. runtime/ and cli/ (the composition roots) are left out: they wire everything.
 */
function controlPlaneLayers(layers) {
  const folders = ['domain', 'config', 'logging', 'errors', 'db', 'repositories', 'templates', 'media', 'services', 'presenters', 'payments', 'email', 'metrics', 'temporal', 'http', 'mcp', 'runtime', 'cli'];
  const importsOf = (folder) => ['', '../', '../../', '../../../'].flatMap((up) => [`${up}${folder}/*`, `${up}${folder}/**`]).filter((pattern) => !pattern.startsWith(`${folder}/`));
  return Object.entries(layers).map(([layer, { may, types = [] }]) => {
    const closed = folders.filter((folder) => folder !== layer && !may.includes(folder));
    return {
      files: [`control-plane/src/${layer}/**`],
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', {
          patterns: closed.map((folder) => ({
            group: importsOf(folder),
            allowTypeImports: types.includes(folder),
            message: `control-plane/src/${layer} may import ${[...may, ...types.map((t) => `types of ${t}`)].join(', ') || 'no other control-plane folder'} (docs/architecture.md).`,
          })),
        }],
      },
    };
  });
}
