import { scrubSecrets } from './secret-scope.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/** Field names whose values are never written to a log, at any depth. */
const SECRET_FIELD = /token|secret|password|apikey|api_key|authorization|credential|cookie/i;
/** Token-shaped strings are masked even under innocent field names. */
const SECRET_VALUE = /\b(svc_(?:ut|rt|sk)_|emb_pk_live_)[0-9A-Za-z]+/g;

export type LogFields = Record<string, unknown>;

/** Structured JSON-lines logger with secret redaction; one line per event. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/**
 * A copy of `value` safe to log: secret-named fields masked, token-shaped strings masked, and any
 * third-party key handed out in this request (see secret-scope.ts) replaced.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value.replace(SECRET_VALUE, '$1[REDACTED]'));
  if (value instanceof Error) return { name: value.name, message: redact(value.message), stack: value.stack };
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELD.test(k) && couldBeSecret(v) ? '[REDACTED]' : redact(v, depth + 1);
  }
  return out;
}

/**
 * Whether a value under a secret-sounding name (`totalTokens`, `hasToken`) is worth masking: numbers,
 * booleans, empty strings and absent values never are (a usage record's token count is not a
 * credential). Any other string, object or array is masked whole, whatever its inner names.
 */
function couldBeSecret(value: unknown): boolean {
  return value !== null && value !== undefined && value !== '' && typeof value !== 'number' && typeof value !== 'boolean' && typeof value !== 'bigint';
}

export function createLogger(level: LogLevel, base: LogFields = {}, write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const threshold = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields) => {
    if (ORDER[lvl] < threshold) return;
    const record = redact({ level: lvl, time: new Date().toISOString(), message, ...base, ...fields });
    write(JSON.stringify(record));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}
