import { createInterface } from 'node:readline';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createClient } from '../client.ts';
import { isInferqError, JobWaitTimeoutError } from '../errors.ts';
import { batchCancel, batchGet, batchList, batchSubmit } from './batch-commands.ts';
import { jobsBulk } from './bulk-submit.ts';
import { emit, integerOption, type Command, type Io, type OptionValues } from './command.ts';
import { loadCliConfig, UsageError } from './config.ts';
import { formatStats, formatWorker } from './format.ts';
import { jobsCancelAll, jobsRetryAll } from './jobs-bulk-commands.ts';
import { jobsDelete, jobsGet, jobsSubmit, jobsWatch } from './jobs-commands.ts';
import { jobsList } from './jobs-list-command.ts';
import { modelsList, modelsPause, modelsPush, modelsResume, modelsRetention, modelsRetire } from './models-commands.ts';
import { usageReport } from './usage-command.ts';

const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const stats: Command = {
  usage: 'stats [--window-minutes N]',
  options: { 'window-minutes': { type: 'string' } },
  async run(ctx) {
    const s = await ctx.client.stats({ windowMinutes: integerOption(ctx.values, 'window-minutes', { min: 1, max: 1440 }) });
    emit(ctx, s, () => formatStats(s));
    return 0;
  },
};

const workers: Command = {
  usage: 'workers',
  options: {},
  async run(ctx) {
    const items = await ctx.client.workers();
    emit(ctx, items, () => (items.length ? items.map(formatWorker) : ['no live workers']));
    return 0;
  },
};

const COMMANDS: Readonly<Record<string, Command>> = {
  'models push': modelsPush,
  'models list': modelsList,
  'models pause': modelsPause,
  'models resume': modelsResume,
  'models retire': modelsRetire,
  'models retention': modelsRetention,
  'jobs submit': jobsSubmit,
  'jobs get': jobsGet,
  'jobs list': jobsList,
  'jobs watch': jobsWatch,
  'jobs delete': jobsDelete,
  'jobs bulk': jobsBulk,
  'jobs cancel-all': jobsCancelAll,
  'jobs retry-all': jobsRetryAll,
  'batch submit': batchSubmit,
  'batch get': batchGet,
  'batch list': batchList,
  'batch cancel': batchCancel,
  stats,
  usage: usageReport,
  workers,
};

const usage = (): string =>
  [
    'usage: inferq <command> [options]',
    '',
    ...Object.values(COMMANDS).map((c) => `  inferq ${c.usage}`),
    '',
    'options for every command: --url URL (or INFERQ_URL)  --api-key KEY (or INFERQ_API_KEY)  --json',
  ].join('\n');

/** The command named by the first one or two words that are not options. */
function findCommand(argv: string[]): { name: string; command: Command } | undefined {
  const all = Object.assign({}, GLOBAL_OPTIONS, ...Object.values(COMMANDS).map((c) => c.options)) as ParseArgsConfig['options'];
  const { positionals } = parseArgs({ args: argv, options: all, strict: false, allowPositionals: true });
  const [first, second] = positionals;
  for (const name of [`${first} ${second}`, `${first}`]) {
    const command = COMMANDS[name];
    if (command) return { name, command };
  }
  return undefined;
}

function reportError(err: unknown, io: Io, command?: Command): number {
  if (err instanceof UsageError) {
    io.stderr(`inferq: ${err.message}\n${command ? `usage: inferq ${command.usage}` : `\n${usage()}`}\n`);
    return 2;
  }
  if (isInferqError(err)) {
    io.stderr(`inferq: ${err.code} (${err.status}): ${err.detail ?? err.title}\n`);
    for (const e of err.errors) io.stderr(`  ${e.pointer}: ${e.detail}\n`);
    if (err.retryAfter !== undefined) io.stderr(`  retry after ${err.retryAfter} s\n`);
    return 1;
  }
  if (err instanceof JobWaitTimeoutError) {
    io.stderr(`inferq: ${err.message}\n`);
    return 1;
  }
  io.stderr(`inferq: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** Runs one CLI invocation; resolves to the exit status. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let found: ReturnType<typeof findCommand>;
  try {
    found = findCommand(argv);
    if (!found) {
      if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
        io.stdout(`${usage()}\n`);
        return 0;
      }
      throw new UsageError(
        `unknown command: ${
          argv
            .filter((a) => !a.startsWith('-'))
            .slice(0, 2)
            .join(' ') || '(none)'
        }`,
      );
    }
    const parsed = parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...found.command.options }, strict: true, allowPositionals: true });
    const values = parsed.values as OptionValues & { help?: boolean; url?: string; 'api-key'?: string; json?: boolean };
    if (values.help) {
      io.stdout(`usage: inferq ${found.command.usage}\n`);
      return 0;
    }
    const words = found.name.split(' ').length;
    const config = loadCliConfig({ url: values.url, 'api-key': values['api-key'], json: values.json });
    const client = createClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
    return await found.command.run({ client, config, values, args: parsed.positionals.slice(words), io });
  } catch (err) {
    // parseArgs reports unknown or malformed options as TypeErrors with an ERR_PARSE_ARGS_* code.
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
      return reportError(new UsageError(err.message), io, found?.command);
    return reportError(err, io, found?.command);
  }
}

const io: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTty: process.stderr.isTTY === true,
  // One line from stdin, a terminal or a pipe; stdin ending first (</dev/null) answers no.
  confirm: (question) =>
    new Promise((resolve) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
      rl.once('close', () => resolve(false));
      rl.question(question, (answer) => {
        resolve(/^y(es)?$/i.test(answer.trim()));
        rl.close();
      });
    }),
};
process.exitCode = await runCli(process.argv.slice(2), io);
