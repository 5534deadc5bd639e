// ESLint runs only the promise rules that need the TypeScript type checker (Biome does the rest, see
// biome.json): Biome's own noFloatingPromises misses promises whose type comes from a dependency's
// declarations (docs/decisions/0013-lint-biome-and-typed-promise-rules.md).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.serverless/**', '.esbuild/**', '.cache/**', '.local/**', '**/*.mjs', '**/*.js'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
