import type { ConsoleConfig } from '../lib/console/console-config.ts';

export type { ConsoleConfig } from '../lib/console/console-config.ts';

/** Reads `config.json` beside the console's page; refuses a shape it does not know. */
export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch(new URL('config.json', location.href), { cache: 'no-cache' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  const config = (await response.json()) as Partial<ConsoleConfig>;
  const kind = config.signIn?.kind;
  if (kind !== 'token' && kind !== 'cognito') throw new Error('config.json names no sign-in kind (token or cognito)');
  if (config.apiUrl !== undefined && typeof config.apiUrl !== 'string') throw new Error('config.json: apiUrl must be a string');
  return config as ConsoleConfig;
}

/** The API's base URL: the configured one, or this page's origin. */
export function apiBaseOf(config: ConsoleConfig): string {
  return (config.apiUrl ?? location.origin).replace(/\/+$/, '');
}
