import { credits, keysList, keysRemove, keysSet, login, logout } from './commands/account.ts';
import { chat } from './commands/chat.ts';
import { logs } from './commands/logs.ts';
import { createUser, grantCredits, listUsers, whoami } from './commands/operator.ts';
import { deploy, list } from './commands/resources.ts';
import { resolveConnection } from './config.ts';
import { parseCommandLine, type Context, type OptionName, type Values } from './args.ts';
import { CliError, UsageError } from './errors.ts';
import { redError } from './output.ts';

/**
 * `agent-platform <command>`: a client of a running platform (local or cloud) for developers and
 * operators. It only speaks HTTP to the platform's API, so it works against any deployment the
 * token is valid for.
 */

export const USAGE = `Usage: agent-platform <command> [options]
  from the checkout: npx agent-platform <command>, or npm run cli -- <command>

Account:
  login [--url U] [--token T | --token -]
                          check a token and store it for later commands (read from stdin when not given)
  login --stack S [--email E] [--region R]
                          sign in to a deployed stack with its Cognito user pool (password, then a new one
                          at the first sign-in, or an authenticator code, from the terminal or stdin lines)
  logout                  forget the stored login
  whoami                  show the account the token belongs to
  credits                 the balance and the latest ledger entries
  keys set <service> [--value V]
                          store a third-party key (the value from stdin when not given)
  keys ls                 list stored keys (names and hints, never values)
  keys rm <service>       delete a key

Resources (yours):
  agents deploy <file.py> [--name N] [--description D] [--public]
  actions deploy <file.py> [--name N] [--description D] [--category C] [--public]
  mcp deploy <file.js|file.mjs> [--name N] [--description D] [--public]
                          create it, or update yours of the same name (default name: the file's, without extension)
  ls [agents|actions|mcp] list them (all three by default)
  chat <agent> "prompt" [--conversation C]
                          stream a reply; <agent> is an id, owner/name, or the name of one of yours
  logs [--follow] [--limit N]
                          the latest usage records; --follow prints new ones until Ctrl-C

Operator:
  users create [--alias A] [--email E] [--credits N] [--admin]
                          create an account with a first access token and secret key
  users list [--limit N] [--cursor C]
                          list accounts, a page at a time
  credits grant <userId> --amount N --reason R
                          grant credits; a negative amount takes credits back (a correction)

Cloud (the deployer's AWS credentials; the region from --region, AWS_REGION or the profile):
  cloud invite <email> --stack S
                          create a Cognito account; Cognito emails a temporary password
  cloud promote <email> --stack S
                          make an account that signed in once an operator (the first operator's way in)

  help                    show this text

Options:
  --url URL      platform address (default: $PLATFORM_URL, else the stored login's, else http://127.0.0.1:8787)
  --token T      access token (default: $PLATFORM_TOKEN, else the stored login's for that address, else the
                 file $DATA_DIR/admin-token, DATA_DIR defaulting to .data, which npm start writes on first start)
  --json         print JSON for scripts instead of tables
  -h, --help     show this text

The login is stored in $XDG_CONFIG_HOME/agent-platform/credentials.json (else ~/.config/agent-platform/).`;

interface Command {
  readonly options: readonly OptionName[];
  readonly run: (context: Context) => Promise<number>;
}

const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'json', 'help'];
const DEPLOY_OPTIONS: readonly OptionName[] = ['name', 'description', 'public'];

const COMMANDS: Readonly<Record<string, Command>> = {
  login: {
    options: ['stack', 'email', 'region'],
    run: async (context) => (context.values.stack === undefined ? login(context) : (await cloudCommands()).loginToStack(context)),
  },
  logout: { options: [], run: logout },
  whoami: { options: [], run: whoami },
  credits: { options: [], run: credits },
  'keys set': { options: ['value'], run: keysSet },
  'keys ls': { options: [], run: keysList },
  'keys rm': { options: [], run: keysRemove },
  'agents deploy': { options: DEPLOY_OPTIONS, run: (context) => deploy('agents', context) },
  'actions deploy': { options: [...DEPLOY_OPTIONS, 'category'], run: (context) => deploy('actions', context) },
  'mcp deploy': { options: DEPLOY_OPTIONS, run: (context) => deploy('mcp', context) },
  ls: { options: [], run: list },
  chat: { options: ['conversation'], run: chat },
  logs: { options: ['follow', 'limit'], run: logs },
  'users create': { options: ['alias', 'email', 'credits', 'admin'], run: createUser },
  'users list': { options: ['limit', 'cursor'], run: listUsers },
  'credits grant': { options: ['amount', 'reason'], run: grantCredits },
  'cloud invite': { options: ['stack', 'region'], run: async (context) => (await cloudCommands()).invite(context) },
  'cloud promote': { options: ['stack', 'region'], run: async (context) => (await cloudCommands()).promote(context) },
};

/** Words that start a two-word command; `credits` alone is a command too (the balance). */
/** The cloud commands load three AWS SDK clients (about 0.6 s of CPU): only when one of them runs. */
const cloudCommands = () => import('./commands/cloud.ts');

const GROUPS = new Set(['users', 'credits', 'keys', 'agents', 'actions', 'mcp', 'cloud']);

export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    const { values, positionals } = parseCommandLine(argv);
    const [first, second] = positionals;
    if (values.help || first === 'help' || first === undefined) {
      if (first === undefined && !values.help) throw new UsageError('Missing command.');
      console.log(USAGE);
      return 0;
    }
    const grouped = GROUPS.has(first) && second !== undefined && COMMANDS[`${first} ${second}`] !== undefined;
    const name = grouped ? `${first} ${second}` : first;
    const command = COMMANDS[name];
    if (command === undefined) {
      if (GROUPS.has(first) && second === undefined) throw new UsageError(`${first} needs a subcommand: ${subcommandsOf(first)}.`);
      throw new UsageError(`Unknown command: ${positionals.slice(0, GROUPS.has(first) ? 2 : 1).join(' ')}.`);
    }
    rejectForeignOptions(name, command, values);
    return await command.run({
      args: positionals.slice(grouped ? 2 : 1),
      values,
      output: { json: values.json === true },
      connect: () => resolveConnection(values),
    });
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${redError(error.message)}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof CliError) {
      console.error(redError(error.message));
      return 1;
    }
    throw error;
  }
}

function subcommandsOf(group: string): string {
  return Object.keys(COMMANDS)
    .filter((command) => command.startsWith(`${group} `))
    .map((command) => command.slice(group.length + 1))
    .join(', ');
}

function rejectForeignOptions(name: string, command: Command, values: Values): void {
  const allowed = new Set<string>([...GLOBAL_OPTIONS, ...command.options]);
  const foreign = Object.keys(values).filter((option) => values[option as OptionName] !== undefined && !allowed.has(option));
  if (foreign.length > 0) throw new UsageError(`${name} does not take ${foreign.map((option) => `--${option}`).join(', ')}.`);
}
