import { expectArgs, readNumber, type Context } from '../args.ts';
import { UsageError } from '../errors.ts';
import { dataOrFail } from '../http.ts';
import { isoTime, plural, printJson, printTable } from '../output.ts';

/** The operator's commands (`/admin/...`) and `whoami`, which everyone uses. */

export async function createUser(context: Context): Promise<number> {
  const { values, output } = context;
  expectArgs(context, 0, 0, '');
  const credits = readNumber('credits', values.credits);
  const body = {
    ...(values.alias === undefined ? {} : { alias: values.alias }),
    ...(values.email === undefined ? {} : { email: values.email }),
    ...(credits === undefined ? {} : { credits }),
    ...(values.admin === true ? { isAdmin: true } : {}),
  };
  const { api } = await context.connect();
  const user = await dataOrFail(api.POST('/admin/users', { body }));
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

export async function listUsers(context: Context): Promise<number> {
  const { values, output } = context;
  expectArgs(context, 0, 0, '');
  const limit = readNumber('limit', values.limit);
  const { api } = await context.connect();
  const page = await dataOrFail(api.GET('/admin/users', { params: { query: { limit, cursor: values.cursor } } }));
  if (output.json) {
    printJson(page);
    return 0;
  }
  const rows = page.users.map((u) => [u.userId, u.alias ?? '-', u.email ?? '-', String(u.credits), u.isAdmin ? 'yes' : 'no', u.status, isoTime(u.createdAt)]);
  printTable(['USER ID', 'ALIAS', 'EMAIL', 'CREDITS', 'ADMIN', 'STATUS', 'CREATED'], rows);
  console.log(plural(page.count, 'user'));
  if (page.nextCursor !== null) console.log(`More: agent-platform users list${limit === undefined ? '' : ` --limit ${limit}`} --cursor ${page.nextCursor}`);
  return 0;
}

export async function grantCredits(context: Context): Promise<number> {
  const { values, output } = context;
  const [userId] = expectArgs(context, 1, 1, 'credits grant needs a user id.');
  const amount = readNumber('amount', values.amount);
  if (amount === undefined) throw new UsageError('credits grant needs --amount.');
  if (values.reason === undefined) throw new UsageError('credits grant needs --reason.');
  const { api } = await context.connect();
  const grant = await dataOrFail(api.POST('/admin/users/{userId}/credits', { params: { path: { userId: userId! } }, body: { amount, reason: values.reason } }));
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

export async function whoami(context: Context): Promise<number> {
  expectArgs(context, 0, 0, '');
  const connection = await context.connect();
  const user = await dataOrFail(connection.api.GET('/user/info'));
  if (context.output.json) {
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
