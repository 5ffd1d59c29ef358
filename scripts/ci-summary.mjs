// The last lines `.ci/run` prints: each step's outcome and, for a failed run, the
// tests that failed with the first lines of why. Whoever reads only the tail of
// a long CI log (a CI page cut to its end) still sees what went wrong.
//
//   node scripts/ci-summary.mjs [step=status ...] [results.json ...]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const steps = args.filter((a) => a.includes('='));
const resultFiles = args.filter((a) => !a.includes('='));
const MAX_FAILURES = 20;
const MESSAGE_LINES = 6;

console.log('\n== CI summary ==');
for (const step of steps) {
  const [name, status] = step.split('=');
  console.log(`${status === '0' ? 'ok    ' : 'FAILED'} ${name}${status === '0' ? '' : ` (exit ${status})`}`);
}

const failures = [];
for (const path of resultFiles) {
  let results;
  try {
    results = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    console.log(`${path}: no test results (${err.code ?? err.message})`);
    continue;
  }
  const skipped = results.numPendingTests + results.numTodoTests;
  console.log(`${path}: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`);
  for (const file of results.testResults ?? []) {
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    // A file that failed outside any test (an import error, a hook) has no failed assertion, only its message.
    if (failed.length === 0 && file.status === 'failed') failures.push({ where: file.name, message: file.message ?? '' });
    for (const a of failed) failures.push({ where: `${file.name} > ${a.fullName}`, message: (a.failureMessages ?? []).join('\n') });
  }
}
for (const f of failures.slice(0, MAX_FAILURES)) {
  console.log(`\nFAILED ${f.where}`);
  const lines = f.message.split('\n').filter((l) => l.trim() !== '');
  for (const line of lines.slice(0, MESSAGE_LINES)) console.log(`  ${line.slice(0, 300)}`);
}
if (failures.length > MAX_FAILURES) console.log(`\n… and ${failures.length - MAX_FAILURES} more failed`);
