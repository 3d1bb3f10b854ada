import { expectArgs, type Context } from '../args.ts';
import { credentialsFile, readStoredLogin, removeLogin, resolveUrl, storeLogin } from '../config.ts';
import { CliError } from '../errors.ts';
import { connectTo, dataOrFail } from '../http.ts';
import { readSecret } from '../input.ts';
import { isoTime, printJson, printTable } from '../output.ts';

/** The caller's own account: login, credits and third-party keys. */

/** `login`: the token is checked with `GET /user/info` before it is stored, so a typo never gets saved. */
export async function login(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const { values, output } = context;
  const url = resolveUrl(values, await readStoredLogin().catch(() => undefined));
  const token = values.token === undefined || values.token === '-' ? (await readSecret(`Access token for ${url}: `)).trim() : values.token.trim();
  const user = await dataOrFail(connectTo(url, token).api.GET('/user/info'));
  const file = await storeLogin({ url, token });
  if (output.json) {
    printJson({ url, userId: user.userId, alias: user.alias, credentialsFile: file });
    return 0;
  }
  console.log(`Logged in to ${url} as ${user.alias ?? '(no alias)'} (${user.userId}).`);
  console.log(`Stored in ${file}; later commands use it.`);
  return 0;
}

export async function logout(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const removed = await removeLogin();
  if (context.output.json) printJson({ removed, credentialsFile: credentialsFile() });
  else console.log(removed ? `Logged out: removed ${credentialsFile()}.` : 'Not logged in: nothing to remove.');
  return 0;
}

export async function credits(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const { api } = await context.connect();
  const balance = await dataOrFail(api.GET('/user/credits'));
  if (context.output.json) {
    printJson(balance);
    return 0;
  }
  console.log(`Balance: ${balance.credits} credits${balance.monthlyFreeCredits > 0 ? ` (plus ${balance.monthlyFreeCredits} free each month)` : ''}`);
  if (balance.recentEntries.length > 0) {
    console.log('');
    printTable(
      ['TIME', 'AMOUNT', 'BALANCE', 'REASON'],
      balance.recentEntries.map((entry) => [isoTime(entry.createdAt), signed(entry.amount), String(entry.balanceAfter), entry.reason]),
    );
  }
  return 0;
}

function signed(amount: number): string {
  return amount > 0 ? `+${amount}` : String(amount);
}

/** `keys set`: the value comes from --value or stdin and is never printed back. */
export async function keysSet(context: Context): Promise<number> {
  const [serviceName] = expectArgs(context, 1, 1, 'keys set needs a service name, e.g. keys set openai.');
  const apiKey = context.values.value ?? (await readSecret(`Value of the ${serviceName} key: `));
  if (apiKey === '') throw new CliError('The key value is empty.');
  const { api } = await context.connect();
  const stored = await dataOrFail(api.POST('/keys/store', { body: { serviceName: serviceName!, apiKey } }));
  if (context.output.json) printJson({ serviceName: stored.serviceName, replaced: stored.replaced, updatedAt: stored.updatedAt });
  else console.log(`${stored.replaced ? 'Replaced' : 'Stored'} the ${stored.serviceName} key.`);
  return 0;
}

export async function keysList(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const { api } = await context.connect();
  const { keys } = await dataOrFail(api.GET('/keys/list'));
  if (context.output.json) {
    printJson(keys);
    return 0;
  }
  if (keys.length === 0) {
    console.log('No keys stored.');
    return 0;
  }
  printTable(
    ['SERVICE', 'HINT', 'UPDATED'],
    keys.map((key) => [key.serviceName, key.hint, isoTime(key.updatedAt)]),
  );
  return 0;
}

export async function keysRemove(context: Context): Promise<number> {
  const [serviceName] = expectArgs(context, 1, 1, 'keys rm needs a service name.');
  const { api } = await context.connect();
  const deleted = await dataOrFail(api.DELETE('/keys/{serviceName}', { params: { path: { serviceName: serviceName! } } }));
  if (context.output.json) printJson({ serviceName: deleted.serviceName, deleted: true });
  else console.log(`Deleted the ${deleted.serviceName} key.`);
  return 0;
}
