import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { KNOWN_BACK_IMPORTS } from './scripts/known-back-imports.mjs';
import { layers } from './scripts/eslint-layers.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'client/dist/**',
      'agent/dist/**',
      'web/dist/**',
      'client/node_modules/**',
      'coverage/**',
      '.data/**',
      'test-artifacts/**',
      '.test-build-*/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { disallowTypeAnnotations: false, fixStyle: 'inline-type-imports' },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // Scripts, test harness modules, the benchmarks' helper processes and the tools' own settings
    // are plain JavaScript that Node runs as it is: the same rules without the type-aware ones.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { layers },
    rules: {
      'layers/shared-folders-are-leaves': [
        'error',
        { root: import.meta.dirname, knownBackImports: KNOWN_BACK_IMPORTS },
      ],
    },
  },
);
