import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `npm run cli -- <command>`: the operator's client of a running platform (local or cloud). It only
 * speaks HTTP to the platform's API, so it works against any deployment the token is valid for.
 */

const DEFAULT_URL = 'http://127.0.0.1:8787';
const REQUEST_TIMEOUT_MS = 30_000;

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  users create [--alias A] [--email E] [--credits N] [--admin]
                          create an account with a first access token and secret key
  users list [--limit N] [--cursor C]
                          list accounts, a page at a time
  credits grant <userId> --amount N --reason R
                          grant credits; a negative amount takes credits back (a correction)
  whoami                  show the account the token belongs to
  help                    show this text

Options:
  --url URL      platform address (default: $PLATFORM_URL, else ${DEFAULT_URL})
  --token T      access token (default: $PLATFORM_TOKEN, else the file $DATA_DIR/admin-token,
                 DATA_DIR defaulting to .data, which npm start writes on first start)
  --json         print the response data as JSON
  -h, --help     show this text`;

/** Wrong invocation: exit 2 with the usage text. */
class UsageError extends Error {}

/** A failure to report in one line: exit 1. */
class CliError extends Error {}

const OPTIONS = {
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
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = ReturnType<typeof parseCommandLine>['values'];

const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'json', 'help'];
const COMMAND_OPTIONS: Readonly<Record<string, readonly OptionName[]>> = {
  'users create': ['alias', 'email', 'credits', 'admin'],
  'users list': ['limit', 'cursor'],
  'credits grant': ['amount', 'reason'],
  whoami: [],
};

interface Connection {
  readonly url: string;
  readonly token: string;
}

type Connect = () => Promise<Connection>;

interface Output {
  readonly json: boolean;
}

/** The success envelope of the platform (style B); errors carry `error` instead. */
interface Envelope<T> {
  readonly data: T;
}

interface CreatedUser {
  userId: string;
  alias: string | null;
  token: string;
  tokenId: string;
  secretKey: string;
}

interface UserInfo {
  userId: string;
  alias: string | null;
  email: string | null;
  credits: number;
  isAdmin: boolean;
  status: string;
  createdAt: number;
}

interface UserPage {
  users: UserInfo[];
  count: number;
  nextCursor: string | null;
}

interface Grant {
  userId: string;
  amount: number;
  credits: number;
  entryId: string;
  reason: string;
}

process.exitCode = await runCli(process.argv.slice(2));

async function runCli(argv: readonly string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv);
    const [first, second] = positionals;
    if (values.help || first === 'help' || first === undefined) {
      if (first === undefined && !values.help) throw new UsageError('Missing command.');
      console.log(USAGE);
      return 0;
    }
    const command = first === 'users' || first === 'credits' ? `${first} ${second ?? ''}`.trim() : first;
    if (second === undefined && (first === 'users' || first === 'credits')) throw new UsageError(`${first} needs a subcommand: ${subcommandsOf(first)}.`);
    if (COMMAND_OPTIONS[command] === undefined) throw new UsageError(`Unknown command: ${command}.`);
    rejectForeignOptions(command, values);
    const output: Output = { json: values.json === true };

    // Commands check their own arguments before connecting, so a usage error never waits on the network or the token.
    const open = () => connect(values);
    switch (command) {
      case 'users create':
        expectPositionals(positionals, 2);
        return await createUser(open, values, output);
      case 'users list':
        expectPositionals(positionals, 2);
        return await listUsers(open, values, output);
      case 'credits grant':
        return await grantCredits(open, positionals, values, output);
      default:
        expectPositionals(positionals, 1);
        return await showWhoami(open, output);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof CliError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

function parseCommandLine(argv: readonly string[]) {
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

function subcommandsOf(group: string): string {
  return Object.keys(COMMAND_OPTIONS)
    .filter((command) => command.startsWith(`${group} `))
    .map((command) => command.slice(group.length + 1))
    .join(', ');
}

function rejectForeignOptions(command: string, values: Values): void {
  const allowed = new Set<string>([...GLOBAL_OPTIONS, ...(COMMAND_OPTIONS[command] ?? [])]);
  const foreign = Object.keys(values).filter((name) => values[name as OptionName] !== undefined && !allowed.has(name));
  if (foreign.length > 0) throw new UsageError(`${command} does not take ${foreign.map((name) => `--${name}`).join(', ')}.`);
}

function expectPositionals(positionals: readonly string[], count: number): void {
  if (positionals.length > count) throw new UsageError(`Unexpected argument: ${positionals[count]}.`);
}

function readNumber(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`--${name} must be a number, not "${text}".`);
  return value;
}

/** The platform address and the token: flags first, then the environment, then the local admin token file. */
async function connect(values: Values): Promise<Connection> {
  const url = (values.url ?? nonEmpty(process.env['PLATFORM_URL']) ?? DEFAULT_URL).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) address, not "${url}".`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http(s) address, not "${url}".`);

  const token = values.token ?? nonEmpty(process.env['PLATFORM_TOKEN']) ?? (await readTokenFile());
  return { url, token };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

async function readTokenFile(): Promise<string> {
  const file = join(nonEmpty(process.env['DATA_DIR']) ?? '.data', 'admin-token');
  const token = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (token === '') {
    throw new CliError(`No access token: pass --token, set PLATFORM_TOKEN, or start the local platform once (npm start) so that it writes ${file}.`);
  }
  return token;
}

/** One call to the platform; returns `data` of the envelope or throws a CliError with the platform's message. */
async function callPlatform<T>(connection: Connection, method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(connection.url + path, {
      method,
      headers: { authorization: `Bearer ${connection.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw new CliError(`The platform at ${connection.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s.`);
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new CliError(
      `The platform is not reachable at ${connection.url}${cause ? ` (${cause})` : ''}. Start it with \`npm start\`, or point --url (or PLATFORM_URL) at a running one.`,
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`Unexpected answer from ${connection.url}${path}: HTTP ${response.status}, not JSON. Is --url the platform's address?`);
  }
  if (!response.ok) throw new CliError(describeFailure(response.status, parsed));
  return (parsed as Envelope<T>).data;
}

/** `Error: <platform message> (CODE, HTTP 403, request <id>)`, reading both envelope styles. */
function describeFailure(status: number, body: unknown): string {
  const envelope = (body ?? {}) as { error?: unknown; code?: unknown; requestId?: unknown };
  const nested = typeof envelope.error === 'object' && envelope.error !== null ? (envelope.error as { message?: unknown; code?: unknown }) : undefined;
  const message = typeof envelope.error === 'string' ? envelope.error : typeof nested?.message === 'string' ? nested.message : `HTTP ${status}`;
  const code = typeof envelope.code === 'string' ? envelope.code : typeof nested?.code === 'string' ? nested.code : undefined;
  const details = [code, `HTTP ${status}`, typeof envelope.requestId === 'string' ? `request ${envelope.requestId}` : undefined].filter(
    (part) => part !== undefined,
  );
  return `Error: ${message} (${details.join(', ')})`;
}

function printJson(data: unknown): void {
  console.log(JSON.stringify(data, null, 2));
}

async function createUser(open: Connect, values: Values, output: Output): Promise<number> {
  const credits = readNumber('credits', values.credits);
  const body = {
    ...(values.alias === undefined ? {} : { alias: values.alias }),
    ...(values.email === undefined ? {} : { email: values.email }),
    ...(credits === undefined ? {} : { credits }),
    ...(values.admin === true ? { isAdmin: true } : {}),
  };
  const user = await callPlatform<CreatedUser>(await open(), 'POST', '/admin/users', body);
  if (output.json) {
    printJson(user);
    return 0;
  }
  console.log(`Created user ${user.userId}${values.admin === true ? ' (operator)' : ''}`);
  console.log(`  alias:       ${user.alias ?? '(none)'}`);
  console.log(`  access token ${user.tokenId}:`);
  console.log(`               ${user.token}`);
  console.log(`  secret key:  ${user.secretKey}`);
  console.log('The token and the secret key are shown only once: store them now.');
  return 0;
}

async function listUsers(open: Connect, values: Values, output: Output): Promise<number> {
  const query = new URLSearchParams();
  const limit = readNumber('limit', values.limit);
  if (limit !== undefined) query.set('limit', String(limit));
  if (values.cursor !== undefined) query.set('cursor', values.cursor);
  const page = await callPlatform<UserPage>(await open(), 'GET', `/admin/users${query.size > 0 ? `?${query}` : ''}`);
  if (output.json) {
    printJson(page);
    return 0;
  }
  const rows = page.users.map((u) => [
    u.userId,
    u.alias ?? '-',
    u.email ?? '-',
    String(u.credits),
    u.isAdmin ? 'yes' : 'no',
    u.status,
    new Date(u.createdAt).toISOString(),
  ]);
  printTable(['USER ID', 'ALIAS', 'EMAIL', 'CREDITS', 'ADMIN', 'STATUS', 'CREATED'], rows);
  console.log(`${page.count} user${page.count === 1 ? '' : 's'}`);
  if (page.nextCursor !== null) console.log(`More: npm run cli -- users list${limit === undefined ? '' : ` --limit ${limit}`} --cursor ${page.nextCursor}`);
  return 0;
}

async function grantCredits(open: Connect, positionals: readonly string[], values: Values, output: Output): Promise<number> {
  const userId = positionals[2];
  if (userId === undefined) throw new UsageError('credits grant needs a user id.');
  expectPositionals(positionals, 3);
  const amount = readNumber('amount', values.amount);
  if (amount === undefined) throw new UsageError('credits grant needs --amount.');
  if (values.reason === undefined) throw new UsageError('credits grant needs --reason.');
  const grant = await callPlatform<Grant>(await open(), 'POST', `/admin/users/${encodeURIComponent(userId)}/credits`, { amount, reason: values.reason });
  if (output.json) {
    printJson(grant);
    return 0;
  }
  // The ledger records a correction as a debit with a negative amount, rounded like every credit amount.
  const taken = grant.amount < 0;
  console.log(
    `${taken ? 'Took back' : 'Granted'} ${Math.abs(grant.amount)} credits ${taken ? 'from' : 'to'} ${grant.userId} (${grant.reason}); balance now ${grant.credits}.`,
  );
  console.log(`Ledger entry ${grant.entryId}`);
  return 0;
}

async function showWhoami(open: Connect, output: Output): Promise<number> {
  const connection = await open();
  const user = await callPlatform<UserInfo>(connection, 'GET', '/user/info');
  if (output.json) {
    printJson(user);
    return 0;
  }
  console.log(`${user.alias ?? '(no alias)'}  ${user.userId}${user.isAdmin ? '  operator' : ''}`);
  console.log(`  email:   ${user.email ?? '-'}`);
  console.log(`  credits: ${user.credits}`);
  console.log(`  status:  ${user.status}`);
  console.log(`  at:      ${connection.url}`);
  return 0;
}

function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}
