import type { ParseArgsConfig } from 'node:util';
import type { InferqClient } from '../client.ts';
import { UsageError, type CliConfig } from './config.ts';

export type OptionValues = Readonly<Record<string, string | boolean | undefined>>;

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal, so a progress bar can redraw in place. */
  stderrIsTty: boolean;
  /** Asks a yes-or-no question (on stderr) and reads the answer (from stdin): true only for y or yes; no answer is no. */
  confirm?(question: string): Promise<boolean>;
}

export interface CommandContext {
  client: InferqClient;
  config: CliConfig;
  values: OptionValues;
  /** Positionals after the command words. */
  args: string[];
  io: Io;
}

export interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Resolves to the exit status. */
  run(ctx: CommandContext): Promise<number>;
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function requiredOption(values: OptionValues, name: string): string {
  const v = stringOption(values, name);
  if (v === undefined) throw new UsageError(`--${name} is required`);
  return v;
}

export function integerOption(values: OptionValues, name: string, bounds: { min: number; max: number }): number | undefined {
  const text = stringOption(values, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < bounds.min || n > bounds.max)
    throw new UsageError(`--${name} must be an integer from ${bounds.min} to ${bounds.max}, not ${JSON.stringify(text)}`);
  return n;
}

export function onePositional(args: string[], what: string): string {
  if (args.length !== 1) throw new UsageError(`expected one ${what}, got ${args.length}`);
  return args[0]!;
}

/** JSON on stdout in --json mode, else the short human lines. */
export function emit(ctx: Pick<CommandContext, 'config' | 'io'>, value: unknown, human: () => string[]): void {
  if (ctx.config.json) ctx.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  else for (const line of human()) ctx.io.stdout(`${line}\n`);
}
