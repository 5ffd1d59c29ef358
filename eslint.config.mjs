// Lint for the bugs an async design invites, with the type checker's help: a promise nobody awaits or catches
// (a rejection that crashes the process, or work that silently outlives its caller), and a promise handed to
// something that ignores what its callback returns (an event emitter, a timer, a React handler). Style is
// Prettier's; module boundaries are dependency-cruiser's.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.inferq/**', 'coverage/**', 'test-results/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // Each file is checked with the tsconfig that owns it; the inference package's benchmark scripts have none.
        projectService: { allowDefaultProject: ['packages/*/bench/*.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
