import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Secret values handed out during one request (the owner's third-party keys). Field-name rules
 * cannot catch a key stored under an innocent name (`keys.openai`), so the logger and the usage
 * writer also replace every value registered here, wherever it appears.
 */
const scope = new AsyncLocalStorage<Set<string>>();

/** Values shorter than this are not scrubbed: they would mangle ordinary text. */
const MIN_SECRET_LENGTH = 6;
/** Encoded forms shorter than this are left out: so few random characters occur in ordinary text. */
const MIN_ENCODED_LENGTH = 8;

/**
 * The strings that give `secret` away: itself, and the characters of its base64 encoding (standard
 * and URL-safe alphabets) at each of the three byte alignments it can have inside a longer encoded
 * text. Only the characters made of the secret's bits alone are kept (the first and last share
 * bits with the bytes around it), so `base64("key=" + secret + "!")` contains one of them too.
 */
export function secretForms(secret: string): string[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const forms = new Set([secret]);
  const bytes = Buffer.from(secret, 'utf8');
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const core = encoded.slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
    if (core.length < MIN_ENCODED_LENGTH) continue;
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
}

export function withSecretScope<T>(work: () => Promise<T>): Promise<T> {
  return scope.run(new Set(), work);
}

export function registerSecret(value: string): void {
  const secrets = scope.getStore();
  for (const form of secretForms(value)) secrets?.add(form);
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
    for (const form of secretForms(value)) this.values.add(form);
    while (this.values.size > this.maxValues) this.values.delete(this.values.values().next().value as string);
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

/**
 * Scrubs secrets (and their encoded forms, `secretForms`) from text that arrives in pieces. A
 * secret split across two pieces is still caught: the tail of what came so far that could begin
 * one is held back until the next piece shows whether it does (or until `flush`), so a caller sees
 * everything else as soon as it comes. Text chat's stream and voice transcripts use it alike.
 */
export class StreamScrubber {
  private readonly secrets: readonly string[];
  private held = '';

  constructor(secrets: readonly string[]) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...new Set(secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  }

  /** The part of `text` (after what was held) that can be shown now, secrets replaced. */
  push(text: string): string {
    const out = this.scrub(this.held + text);
    const keep = this.tailThatCouldBeginASecret(out);
    this.held = out.slice(out.length - keep);
    return out.slice(0, out.length - keep);
  }

  /** What was held back, at the end of the stream: it begins no secret after all. */
  flush(): string {
    const out = this.held;
    this.held = '';
    return out;
  }

  /** `text`, whole, with every secret replaced (nothing held back). */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
    return out;
  }

  private tailThatCouldBeginASecret(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
