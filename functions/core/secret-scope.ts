import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Secret values handed out during one request (the owner's third-party keys). Field-name rules
 * cannot catch a key stored under an innocent name (`keys.openai`), so the logger and the usage
 * writer also replace every value registered here, wherever it appears.
 */
const scope = new AsyncLocalStorage<Set<string>>();

/** Values shorter than this are not scrubbed: they would mangle ordinary text. */
const MIN_SECRET_LENGTH = 6;

export function withSecretScope<T>(work: () => Promise<T>): Promise<T> {
  return scope.run(new Set(), work);
}

export function registerSecret(value: string): void {
  if (value.length >= MIN_SECRET_LENGTH) scope.getStore()?.add(value);
}

/** `text` with every secret registered in the current request replaced. */
export function scrubSecrets(text: string): string {
  const secrets = scope.getStore();
  if (secrets === undefined || secrets.size === 0) return text;
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  return out;
}
