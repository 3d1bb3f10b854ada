import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, UsageError } from './errors.ts';
import { connectTo, type Connection } from './http.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** What `login` stores: the platform address and the token that was verified against it. */
export interface StoredLogin {
  readonly url: string;
  readonly token: string;
}

/** The flags every command takes that choose the platform and the credential. */
export interface ConnectionFlags {
  readonly url?: string | undefined;
  readonly token?: string | undefined;
}

/** `$XDG_CONFIG_HOME/agent-platform/credentials.json`, else `~/.config/agent-platform/credentials.json`. */
export function credentialsFile(): string {
  const configHome = nonEmpty(process.env['XDG_CONFIG_HOME']) ?? join(homedir(), '.config');
  return join(configHome, 'agent-platform', 'credentials.json');
}

export async function readStoredLogin(): Promise<StoredLogin | undefined> {
  const file = credentialsFile();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`Cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<StoredLogin>;
    if (typeof parsed.url === 'string' && typeof parsed.token === 'string') return { url: parsed.url, token: parsed.token };
  } catch {
    // reported below, as for a file of the wrong shape
  }
  throw new CliError(`${file} is not a login this CLI wrote: run login again, or logout to remove it.`);
}

/**
 * Writes the login readable by its owner only: the directory 700 and the file 600 from the moment
 * it exists (a temporary file in the same directory, renamed over the old one, so a reader never
 * sees half a file and a crash never leaves the token with looser permissions).
 */
export async function storeLogin(login: StoredLogin): Promise<string> {
  const file = credentialsFile();
  const dir = dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temporary = join(dir, `.credentials-${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`Cannot write ${file}: ${(error as Error).message}`);
  }
  return file;
}

/** Removes the stored login; false when there was none. */
export async function removeLogin(): Promise<boolean> {
  const file = credentialsFile();
  const existed = (await readStoredLogin().catch(() => 'unreadable')) !== undefined;
  await rm(file, { force: true });
  return existed;
}

/**
 * The platform address: `--url`, else PLATFORM_URL, else the stored login's, else the local
 * platform's default.
 */
export function resolveUrl(flags: ConnectionFlags, stored: StoredLogin | undefined): string {
  const url = (nonEmpty(flags.url) ?? nonEmpty(process.env['PLATFORM_URL']) ?? stored?.url ?? DEFAULT_URL).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) address, not "${url}".`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http(s) address, not "${url}".`);
  return url;
}

/**
 * The address and the token: flags, then PLATFORM_URL / PLATFORM_TOKEN, then the stored login,
 * then (the operator on the local platform) `$DATA_DIR/admin-token`. A stored token is only sent
 * to the address it was stored for, so `--url` of another platform never leaks it there.
 */
export async function resolveConnection(flags: ConnectionFlags): Promise<Connection> {
  const stored = await readStoredLogin();
  const url = resolveUrl(flags, stored);
  const token =
    nonEmpty(flags.token) ??
    nonEmpty(process.env['PLATFORM_TOKEN']) ??
    (stored !== undefined && stored.url === url ? stored.token : undefined) ??
    (await readAdminToken());
  return connectTo(url, token);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

async function readAdminToken(): Promise<string> {
  const file = join(nonEmpty(process.env['DATA_DIR']) ?? '.data', 'admin-token');
  const token = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (token === '') {
    throw new CliError(
      `No access token: run \`agent-platform login\`, pass --token or set PLATFORM_TOKEN (the operator of a local platform: start it once with npm start, which writes ${file}).`,
    );
  }
  return token;
}
