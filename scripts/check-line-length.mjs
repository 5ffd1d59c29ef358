// Prettier wraps code at printWidth but leaves long strings and comments alone; this holds every
// source file git tracks or would track (moves not yet committed included) to the same 160 characters, so `npm run lint` fails on a line Prettier cannot fix.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const LIMIT = JSON.parse(readFileSync('.prettierrc.json', 'utf8')).printWidth;
const SOURCE = /\.(ts|tsx|js|mjs|cjs|css)$/;

const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => SOURCE.test(f) && !f.startsWith('k8s/rendered/') && existsSync(f));
const long = [];
for (const file of files) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if ([...line].length > LIMIT) long.push(`${file}:${i + 1}: ${[...line].length} characters`);
    });
}
if (long.length > 0) {
  console.error(`${long.length} lines are longer than ${LIMIT} characters (split the string or comment):\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`line length: ${files.length} files, none over ${LIMIT} characters`);
