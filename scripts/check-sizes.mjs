// The size limits of eslint.config.mjs (SIZE_LIMITS: ESLint's `max-lines` and `max-lines-per-function`) on production
// source, as a step of `npm run lint` of its own: without type information it takes seconds, and a failure names the
// rule and what to do. `eslint .` checks the same rules again (so editors show them); this step runs first.
// It also fails on an exception that is no longer needed (the file is now within the limit, or gone), so the list
// only shrinks. `--all` prints every file over a limit today, exceptions or not: the list to put in SIZE_EXCEPTIONS.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import config, { PRODUCTION_SOURCE, SIZE_EXCEPTIONS, SIZE_LIMITS } from '../eslint.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  // The global ignores, the parser without type information, and the limits with no exception: they are applied below.
  overrideConfig: [
    config.find((block) => block.name === 'inferq/ignores'),
    { ...PRODUCTION_SOURCE, languageOptions: { parser: tseslint.parser }, rules: SIZE_LIMITS },
  ],
});
const results = await eslint.lintFiles(['.']);
const findings = results.flatMap((r) => r.messages.map((m) => ({ file: relative(root, r.filePath), line: m.line, rule: m.ruleId, message: m.message })));
const unparsed = findings.filter((f) => !(f.rule in SIZE_LIMITS));
if (unparsed.length > 0) {
  console.error(unparsed.map((f) => `${f.file}:${f.line}: ${f.message}`).join('\n'));
  process.exit(1);
}

if (process.argv.includes('--all')) {
  for (const rule of Object.keys(SIZE_LIMITS)) {
    console.log(`  '${rule}': {`);
    for (const f of findings.filter((f) => f.rule === rule)) {
      console.log(`    ${JSON.stringify(f.file)}: ${JSON.stringify(SIZE_EXCEPTIONS[rule][f.file] ?? '')}, // ${f.line}: ${f.message}`);
    }
    console.log('  },');
  }
  process.exit(0);
}

const over = findings.filter((f) => !(f.file in SIZE_EXCEPTIONS[f.rule]));
const stale = Object.entries(SIZE_EXCEPTIONS).flatMap(([rule, files]) =>
  Object.keys(files)
    .filter((file) => !findings.some((f) => f.rule === rule && f.file === file))
    .map((file) => `${file}: ${rule}: within the limit now (or gone): take it off SIZE_EXCEPTIONS in eslint.config.mjs`),
);
for (const f of over) console.error(`${f.file}:${f.line}: ${f.rule}: ${f.message}`);
if (over.length > 0) {
  console.error(
    `${over.length} over the size limits (${Object.keys(SIZE_LIMITS).join(', ')}; eslint.config.mjs): split the file by lifecycle ` +
      'step, or the function into named steps (STYLE.md, Size); one that must stay whole goes into SIZE_EXCEPTIONS with the reason.',
  );
}
for (const line of stale) console.error(line);
if (over.length > 0 || stale.length > 0) process.exit(1);
const excepted = Object.values(SIZE_EXCEPTIONS).reduce((n, files) => n + Object.keys(files).length, 0);
const [maxLines, maxFunctionLines] = Object.values(SIZE_LIMITS).map(([, options]) => options.max);
console.log(`sizes: ${results.length} production files, none over ${maxLines} lines or with a function over ${maxFunctionLines} (${excepted} excepted)`);
