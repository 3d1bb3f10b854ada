// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.data/', '.tmp/', '.venv/', 'coverage/', 'python-runtime/', 'layers/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'bin/start.mjs', 'bin/agent-platform.mjs', 'lib/local/current-build.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  { files: ['bin/**', 'test/bench/**', 'test/run-all.ts', 'lib/local/**'], rules: { 'no-console': 'off' } },
  // Code that ends up in Lambda bundles (and the area fixtures that stand in for areas). zod's `z`
  // and default exports are its whole namespace as one object, which esbuild cannot tree-shake:
  // one such import put every schema kind and all of zod's locales (about 440 KB) into every
  // function. `import * as z` keeps the same `z.object(...)` code and lets esbuild keep only what
  // is used (docs/ARCHITECTURE.md, What is in a bundle).
  {
    files: ['functions/**/*.ts', 'lib/**/*.ts', 'bin/**/*.ts', 'test/fixtures/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z'], ImportDeclaration[source.value='zod'] > ImportDefaultSpecifier",
          message: "Use `import * as z from 'zod'`: the `z` export is zod's whole namespace, which bundles every locale and schema kind.",
        },
      ],
    },
  },
  // `npm start`'s launcher and its build check are plain ESM run by Node directly: they decide whether to build, so cannot need one;
  // the CLI's launcher is plain ESM too, since it is what loads tsx.
  {
    files: ['bin/start.mjs', 'bin/agent-platform.mjs', 'lib/local/current-build.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  // The MCP host is plain ESM run by Node directly (no tsx, no build step); it is typed with JSDoc.
  {
    files: ['functions/runtimes/mcp-host/**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      parserOptions: { projectService: false },
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
        Request: 'readonly',
        Response: 'readonly',
        Headers: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        queueMicrotask: 'readonly',
        setImmediate: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: { 'no-console': 'off' },
  },
  // Tests read JSON bodies of many shapes; typing each one would add noise, not safety.
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
