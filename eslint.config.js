// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.data/', '.tmp/', 'coverage/', 'python-runtime/', 'layers/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  { files: ['bin/**', 'test/bench/**', 'test/run-all.ts', 'lib/local/**'], rules: { 'no-console': 'off' } },
  // Tests read JSON bodies of many shapes; typing each one would add noise, not safety.
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
