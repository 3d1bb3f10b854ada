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
  return secrets === undefined ? text : replaceSecrets(text, secrets);
}

/**
 * Secrets that outlive one request: every value handed to one tenant's long-lived process (a
 * runtime server, an MCP host). That process's own output (stderr, crash messages) is written
 * outside any request, so the request scope cannot scrub it; this set can. Bounded: the oldest
 * values go first, as a process that lived long enough to see that many keys is restarted anyway.
 */
export class SecretSet {
  private readonly values = new Set<string>();

  constructor(private readonly maxValues = 1000) {}

  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.values.has(value)) return;
    this.values.add(value);
    if (this.values.size > this.maxValues) this.values.delete(this.values.values().next().value as string);
  }

  /**
   * Adds every value of a record but those under `publicNames`, and the string values of the JSON
   * objects such values hold (`SVC_KEYS_JSON`).
   */
  addValuesOf(record: Readonly<Record<string, string>>, publicNames: readonly string[] = []): void {
    for (const [name, value] of Object.entries(record)) {
      if (publicNames.includes(name)) continue;
      this.add(value);
      for (const nested of jsonStringValues(value)) this.add(nested);
    }
  }

  scrub(text: string): string {
    return replaceSecrets(text, this.values);
  }
}

function replaceSecrets(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  return out;
}

/** The string values of a JSON object held in `text`; none when it is not one. */
function jsonStringValues(text: string): string[] {
  if (!text.startsWith('{')) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return [];
    return Object.values(parsed).filter((value): value is string => typeof value === 'string');
  } catch {
    return [];
  }
}
