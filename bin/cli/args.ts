import { parseArgs } from 'node:util';
import { UsageError } from './errors.ts';
import type { Connection } from './http.ts';
import type { Output } from './output.ts';

/** Every option of every command; each command accepts the global ones and its own (main.ts). */
export const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  alias: { type: 'string' },
  email: { type: 'string' },
  credits: { type: 'string' },
  admin: { type: 'boolean' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  amount: { type: 'string' },
  reason: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  category: { type: 'string' },
  public: { type: 'boolean' },
  conversation: { type: 'string' },
  follow: { type: 'boolean' },
  value: { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type Values = ReturnType<typeof parseCommandLine>['values'];

/** What a command receives: its own arguments (after the command words), the options, and a way to connect. */
export interface Context {
  readonly args: readonly string[];
  readonly values: Values;
  readonly output: Output;
  /** Resolves the address and token; commands check their arguments first, so a usage error never waits on them. */
  readonly connect: () => Promise<Connection>;
}

export function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({ args: joinNegativeValues(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * parseArgs takes `--amount -5` for two options; a correction is naturally typed that way, so a
 * negative number after a value option becomes `--amount=-5`.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (name in OPTIONS && OPTIONS[name as OptionName].type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

/** The command's own arguments, at least `min` and at most `max` of them. */
export function expectArgs(context: Context, min: number, max: number, missing: string): readonly string[] {
  if (context.args.length < min) throw new UsageError(missing);
  if (context.args.length > max) throw new UsageError(`Unexpected argument: ${context.args[max]}.`);
  return context.args;
}

export function readNumber(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--${name} must be a number, not "${text}".`);
  return value;
}
