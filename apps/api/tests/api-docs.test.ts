import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURL, JQ, createExecutableFinder, resolveDebianBinary } from '@inferq/dev-stack';
import { ADMIN_KEY, demoModel, startStack, type Stack } from '@inferq/test-utils';

// docs/api.md's walkthroughs, run as written against the real API and a worker.
// Fenced blocks whose info string is `sh test` or `ts test` are executable. The
// blocks of one `##` section run in order in one bash with `set -euo pipefail`,
// so a variable set in one block is there in the next; a `ts test` block runs
// with `node --import tsx` from a file inside the repo, so `@inferq/sdk`
// resolves, and sees the exported variables. A block passes when it exits 0.

const ROOT = resolve(import.meta.dirname, '../../..');
const DOC = 'docs/api.md';
// A limit for hangs, not a timing: the CLI section starts a dozen Node processes,
// 0.8 s each on a quiet box and four times that on CI's busy one.
const SECTION_TIMEOUT_MS = 90_000;

interface DocBlock {
  lang: 'sh' | 'ts';
  line: number;
  code: string;
}
interface DocSection {
  title: string;
  blocks: DocBlock[];
}

/** The `## ` sections of a markdown file that hold `sh test` or `ts test` blocks, with those blocks. */
function readTestBlocks(markdown: string): DocSection[] {
  let section: DocSection = { title: '(before the first section)', blocks: [] };
  const sections = [section];
  let fence: { marker: string; block?: DocBlock; lines: string[] } | undefined;
  markdown.split('\n').forEach((text, i) => {
    if (fence) {
      if (text.trimEnd() === fence.marker) {
        if (fence.block) section.blocks.push({ ...fence.block, code: fence.lines.join('\n') });
        fence = undefined;
      } else fence.lines.push(text);
      return;
    }
    const open = /^(`{3,})\s*(\S*)\s*(.*)$/.exec(text);
    if (open) {
      const [, marker, lang, rest] = open;
      const isTest = (lang === 'sh' || lang === 'ts') && rest!.split(/\s+/).includes('test');
      fence = { marker: marker!, lines: [], block: isTest ? { lang: lang as DocBlock['lang'], line: i + 1, code: '' } : undefined };
    } else if (text.startsWith('## ')) {
      section = { title: text.slice(3).trim(), blocks: [] };
      sections.push(section);
    }
  });
  return sections.filter((s) => s.blocks.length > 0);
}

const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
const markerOf = (index: number) => `@@doc-block ${index}@@`;

interface SectionRun {
  code: number | null;
  timedOut: boolean;
  /** The output of each block that started, in order: the last one is the one that failed. */
  outputs: string[];
}

/**
 * Runs a section's blocks in one bash, in `workDir`, with `env` exported and the
 * workspace bins (`inferq`) on PATH. Each block prints a marker first, so the
 * merged output splits back into one piece per block.
 */
async function runSection(section: DocSection, env: Record<string, string>, workDir: string, tsDir: string): Promise<SectionRun> {
  const lines = [
    'set -euo pipefail',
    'exec 2>&1',
    // A failed check (`test …`) prints nothing by itself.
    `trap 'echo "exit status $? from: $BASH_COMMAND"' ERR`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    `export PATH=${shellQuote(resolve(ROOT, 'node_modules/.bin'))}:"$PATH"`,
    // The CLI block must show where its key comes from, not find one left in the environment.
    'unset INFERQ_API_KEY',
  ];
  for (const [i, block] of section.blocks.entries()) {
    const file = join(block.lang === 'ts' ? tsDir : workDir, `block-${block.line}.${block.lang}`);
    await writeFile(file, `${block.code}\n`);
    lines.push(`printf '\\n%s\\n' ${shellQuote(markerOf(i))}`);
    // tsx and @inferq/sdk resolve from the repo root, not from the scratch directory.
    lines.push(block.lang === 'sh' ? `source ${shellQuote(file)}` : `(cd ${shellQuote(ROOT)} && node --import tsx ${shellQuote(file)})`);
  }
  const child = spawn('bash', ['--noprofile', '--norc', '-c', lines.join('\n')], { cwd: workDir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  let timedOut = false;
  // The whole process group: a hung `curl -N` must not outlive the test.
  const timer = setTimeout(() => {
    timedOut = true;
    process.kill(-child.pid!, 'SIGKILL');
  }, SECTION_TIMEOUT_MS);
  const code = await new Promise<number | null>((res, rej) => {
    child.once('error', rej);
    child.once('close', res);
  });
  clearTimeout(timer);
  const outputs = out.split(/\n@@doc-block \d+@@\n/).slice(1);
  return { code, timedOut, outputs };
}

function describeFailure(section: DocSection, run: SectionRun): string {
  const index = Math.max(0, run.outputs.length - 1);
  const block = section.blocks[index]!;
  const why = run.timedOut ? `did not finish within ${SECTION_TIMEOUT_MS} ms` : `exited with status ${run.code}`;
  return `${DOC}:${block.line} (\`${block.lang} test\` block ${index + 1} of "${section.title}") ${why}; its output:\n${run.outputs[index] ?? ''}`;
}

const sections = readTestBlocks(await readFile(resolve(ROOT, DOC), 'utf8'));

let stack: Stack;
let workDir: string;
let tsDir: string;
beforeAll(async () => {
  // The blocks' tools: installed from Debian's packages on a fresh box where we are root.
  const findExecutable = createExecutableFinder(process.env.PATH);
  for (const tool of [CURL, JQ]) await resolveDebianBinary(tool, { findExecutable, log: (line) => console.log(line) });
  stack = await startStack({ logLevel: 'warn' });
  await stack.registerModel('mlp');
  await stack.startWorker();
  workDir = await mkdtemp(join(tmpdir(), 'inferq-api-docs-'));
  tsDir = resolve(ROOT, '.inferq/doc-blocks', stack.ctx.id);
  await mkdir(tsDir, { recursive: true });
});
afterAll(async () => {
  await stack?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
  if (tsDir) await rm(tsDir, { recursive: true, force: true });
});

describe(`${DOC} walkthroughs`, () => {
  it('has executable blocks', () => {
    expect(sections.map((s) => s.title)).toContain('Jobs');
  });

  // In document order: a later section may rely on an earlier one (the upload under Models makes mlp:2).
  for (const section of sections) {
    const count = section.blocks.length;
    it(
      `runs "${section.title}" (${count} block${count === 1 ? '' : 's'})`,
      async () => {
        const env = {
          INFERQ_URL: stack.baseUrl,
          INFERQ_KEY: ADMIN_KEY,
          MODEL_FILE: demoModel('mlp').path,
          ENCODER_FILE: demoModel('transformer').path,
          TOKENIZER_FILE: demoModel('transformer').tokenizerPath!,
        };
        const run = await runSection(section, env, workDir, tsDir);
        if (run.code !== 0) expect.fail(describeFailure(section, run));
      },
      SECTION_TIMEOUT_MS + 5_000,
    );
  }
});
