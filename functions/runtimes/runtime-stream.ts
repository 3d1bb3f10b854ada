/**
 * What both Compute adapters share: turning the runtime's NDJSON response body (see
 * `python-runtime/README.md`, "Invocation protocol") into `RuntimeEvent`s, with the port's
 * guarantees — exactly one `end`, always last, and failures as `error` events, never throws.
 */
import type { Invocation, RuntimeEvent, SourceViolation } from './compute.ts';

/** The runtime caps a whole run at 64 MB of events, so no honest line is longer. */
export const MAX_EVENT_LINE_BYTES = 64 * 1024 * 1024;

/** Error codes this side adds to the runtime's own (README "Error codes"). */
export const COMPUTE_ERROR = {
  /** No runtime could be reached or started (python3 missing, start failed, too many processes). */
  unavailable: 'RUNTIME_UNAVAILABLE',
  /** The runtime went away while the run was streaming. */
  crashed: 'RUNTIME_CRASHED',
  /** The runtime answered something that is not the protocol. */
  protocol: 'RUNTIME_PROTOCOL_ERROR',
  /** The caller aborted the run. */
  aborted: 'ABORTED',
} as const;

export type ErrorEvent = Extract<RuntimeEvent, { type: 'error' }>;
export type EndEvent = Extract<RuntimeEvent, { type: 'end' }>;

export function errorEvent(code: string, message: string): ErrorEvent {
  return { type: 'error', code, message };
}

/**
 * The `end` of a run whose user code never started (the runtime's `start` never came): what an
 * adapter writes for its own failures before the run, e.g. when no runtime could be reached.
 */
export function notStartedEnd(startedAt: number): EndEvent {
  return { type: 'end', started: false, durationMs: Math.max(0, Date.now() - startedAt) };
}

/** A non-200 answer of the runtime's HTTP server (400, 411, 413, 429, 404...), as an error to report. */
export class RuntimeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeHttpError';
  }

  /** Reads the runtime's `{"error":{"code","message"}}` body; anything else still gives a usable error. */
  static fromBody(status: number, body: string): RuntimeHttpError {
    const fallbackCode = status === 429 ? 'TOO_MANY_INVOCATIONS' : status === 400 ? 'INVALID_PARAMETERS' : COMPUTE_ERROR.unavailable;
    try {
      const parsed: unknown = JSON.parse(body);
      const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
      if (error && typeof error.code === 'string' && typeof error.message === 'string') return new RuntimeHttpError(status, error.code, error.message);
    } catch {
      // not JSON: fall through to a generic message
    }
    return new RuntimeHttpError(status, fallbackCode, `the runtime answered HTTP ${status}`);
  }
}

/**
 * The `/invoke` request body: exactly the protocol's fields, so nothing else a caller's object
 * happens to carry is sent to the runtime.
 */
export function invocationBody(invocation: Invocation): string {
  const common = {
    kind: invocation.kind,
    source: invocation.source,
    requestId: invocation.requestId,
    functionName: invocation.functionName,
    timeoutMs: invocation.timeoutMs,
    memoryMb: invocation.memoryMb,
    env: invocation.env,
    allowHosts: invocation.allowHosts,
    ...(invocation.platformCalls ? { platformCalls: invocation.platformCalls } : {}),
    ...(invocation.egressProxy ? { egressProxy: invocation.egressProxy } : {}),
  };
  return JSON.stringify(
    invocation.kind === 'agent' ? { ...common, prompt: invocation.prompt, messages: invocation.messages } : { ...common, event: invocation.event },
  );
}

/** Validates the runtime's `/check` answer, `{ok, violations: [{line, col, message}]}`. */
export function parseCheckResult(body: string): { ok: boolean; violations: SourceViolation[] } {
  const parsed: unknown = JSON.parse(body);
  if (!isRecord(parsed) || typeof parsed.ok !== 'boolean' || !Array.isArray(parsed.violations)) {
    throw new Error('the runtime answered /check with an unexpected body');
  }
  return { ok: parsed.ok, violations: violationsOf(parsed.violations) ?? [] };
}

class LineTooLongError extends Error {}

/**
 * Splits a byte stream into lines. Chunks may end anywhere (inside a line, inside a UTF-8
 * character): bytes are kept until their newline arrives, and decoded only as whole lines, which is
 * safe because 0x0A never occurs inside a multi-byte UTF-8 sequence. A long line costs one concat.
 */
export class NdjsonLineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes = MAX_EVENT_LINE_BYTES) {}

  /** The lines completed by `chunk`, without their newline. Throws when a line exceeds the cap. */
  push(chunk: Uint8Array): string[] {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: string[] = [];
    let start = 0;
    for (let newline = bytes.indexOf(0x0a, start); newline >= 0; newline = bytes.indexOf(0x0a, start)) {
      lines.push(this.takeLine(bytes.subarray(start, newline)));
      start = newline + 1;
    }
    if (start < bytes.length) this.keep(bytes.subarray(start));
    return lines;
  }

  /** The last line when the stream ended without a newline after it, else null. */
  flush(): string | null {
    if (this.pendingBytes === 0) return null;
    return this.takeLine(Buffer.alloc(0));
  }

  private takeLine(tail: Buffer): string {
    this.assertWithinCap(this.pendingBytes + tail.length);
    const line = this.pending.length === 0 ? tail : Buffer.concat([...this.pending, tail]);
    this.pending = [];
    this.pendingBytes = 0;
    return line.toString('utf8');
  }

  private keep(part: Buffer): void {
    this.assertWithinCap(this.pendingBytes + part.length);
    // A copy: the caller's chunk may be a view into a buffer that gets reused.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private assertWithinCap(size: number): void {
    if (size > this.maxLineBytes) throw new LineTooLongError(`an event line exceeded ${this.maxLineBytes} bytes`);
  }
}

/** One line of the runtime's stream, classified. */
export type ParsedLine =
  | { readonly kind: 'event'; readonly event: Exclude<RuntimeEvent, EndEvent> }
  /** The runtime's `start` event: the pid of the child that runs the code (not part of the port). */
  | { readonly kind: 'start'; readonly pid: number | null }
  /** The runtime's `end`, as it reported it; the port's `end` is built from what this side saw. */
  | { readonly kind: 'end'; readonly runtimeDurationMs: number; readonly maxRssKb?: number }
  /** Blank lines and event types this side does not know (a newer runtime): skipped. */
  | { readonly kind: 'ignored' }
  | { readonly kind: 'invalid'; readonly reason: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finiteNumber(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

function violationsOf(value: unknown): SourceViolation[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((v) => ({ line: finiteNumber(v.line), col: finiteNumber(v.col), message: String(v.message ?? '') }));
}

/**
 * Builds the port's event from a decoded runtime object, keeping only the port's fields.
 * Returns a reason string when a known event type lacks a required field.
 */
function toRuntimeEvent(raw: Record<string, unknown>): Exclude<RuntimeEvent, EndEvent> | string {
  switch (raw.type) {
    case 'text':
      return typeof raw.data === 'string' ? { type: 'text', data: raw.data } : 'text without data';
    case 'tool': {
      if (typeof raw.name !== 'string') return 'tool without name';
      const toolUseId = optionalString(raw.toolUseId);
      return toolUseId === undefined ? { type: 'tool', name: raw.name } : { type: 'tool', name: raw.name, toolUseId };
    }
    case 'metrics': {
      const inputTokens = optionalNumber(raw.inputTokens);
      const outputTokens = optionalNumber(raw.outputTokens);
      return {
        type: 'metrics',
        totalCycles: finiteNumber(raw.totalCycles),
        totalTokens: finiteNumber(raw.totalTokens),
        ...(inputTokens === undefined ? {} : { inputTokens }),
        ...(outputTokens === undefined ? {} : { outputTokens }),
        toolsUsed: Array.isArray(raw.toolsUsed) ? raw.toolsUsed.filter((t): t is string => typeof t === 'string') : [],
        durationMs: finiteNumber(raw.durationMs),
      };
    }
    case 'messages':
      return Array.isArray(raw.messages) ? { type: 'messages', messages: raw.messages } : 'messages without a list';
    case 'result': {
      if (typeof raw.statusCode !== 'number') return 'result without statusCode';
      const headers = stringRecord(raw.headers);
      return { type: 'result', statusCode: raw.statusCode, body: raw.body, ...(headers ? { headers } : {}) };
    }
    case 'log':
      return typeof raw.data === 'string' ? { type: 'log', stream: String(raw.stream ?? 'stdout'), data: raw.data } : 'log without data';
    case 'error': {
      if (typeof raw.code !== 'string') return 'error without code';
      const line = optionalNumber(raw.line);
      const errorType = optionalString(raw.errorType);
      const violations = violationsOf(raw.violations);
      return {
        type: 'error',
        code: raw.code,
        message: String(raw.message ?? ''),
        ...(line === undefined ? {} : { line }),
        ...(errorType === undefined ? {} : { errorType }),
        ...(violations === undefined ? {} : { violations }),
      };
    }
    default:
      return 'unknown';
  }
}

/** Classifies one NDJSON line of the runtime's stream. */
export function parseRuntimeLine(line: string): ParsedLine {
  if (line.trim() === '') return { kind: 'ignored' };
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { kind: 'invalid', reason: `not JSON: ${line.slice(0, 80)}` };
  }
  if (!isRecord(raw) || typeof raw.type !== 'string') return { kind: 'invalid', reason: 'an event must be an object with a string "type"' };
  if (raw.type === 'start') return { kind: 'start', pid: typeof raw.pid === 'number' ? raw.pid : null };
  if (raw.type === 'end') {
    // exitCode, signal and the sandbox report stay internal.
    const maxRssKb = optionalNumber(raw.maxRssKb);
    return { kind: 'end', runtimeDurationMs: finiteNumber(raw.durationMs), ...(maxRssKb === undefined ? {} : { maxRssKb }) };
  }
  const event = toRuntimeEvent(raw);
  if (event === 'unknown') return { kind: 'ignored' };
  if (typeof event === 'string') return { kind: 'invalid', reason: event };
  return { kind: 'event', event };
}

/** How a failure of the byte stream is reported; the adapter knows what it means. */
export type FailureClassifier = (error: unknown) => ErrorEvent;

export interface EventStreamOptions {
  /** When the call began (Date.now()): the `end` of a run that never started counts from here. */
  readonly startedAt: number;
  /** Called with the child's pid from the runtime's `start` event. */
  readonly onStart?: (pid: number | null) => void;
  /** Called once the runtime's own `end` has been relayed (not for an `end` written here). */
  readonly onRuntimeEnd?: () => void;
  /** Maps an exception of `chunks` (transport failure, abort, non-200 answer) to the error to yield. */
  readonly classifyFailure: FailureClassifier;
  /** The error to yield when the stream ends cleanly but without `end`. */
  readonly truncated: () => ErrorEvent;
  /** After `end`, how long to keep reading to the end of the body (lets a keep-alive socket be reused). */
  readonly drainMs?: number;
}

/** What this side has seen of one run. */
interface StreamState {
  sawError: boolean;
  /** When the runtime's `start` arrived (Date.now()); null until then. */
  runStartedAt: number | null;
}

/** The port's `end`, from this side's observation; the runtime's own figures only where given. */
function endEvent(state: StreamState, options: EventStreamOptions, reported?: Extract<ParsedLine, { kind: 'end' }>): EndEvent {
  const started = state.runStartedAt !== null;
  return {
    type: 'end',
    started,
    durationMs: Math.max(0, Date.now() - (state.runStartedAt ?? options.startedAt)),
    ...(reported === undefined ? {} : { runtimeDurationMs: reported.runtimeDurationMs }),
    ...(reported?.maxRssKb === undefined ? {} : { maxRssKb: reported.maxRssKb }),
  };
}

/**
 * Yields the events of a runtime response body as they arrive. Always finishes with exactly one
 * `end`, built here from what this side saw (whether the runtime's `start` came, and its own
 * clock): after the runtime's `end`, or after an error event when the stream broke, ended early,
 * exceeded the line cap, or carried a line that is not the protocol (the stream is then abandoned:
 * whatever follows cannot be trusted). At most one `error` is yielded, as in the runtime.
 * Stopping early (return) or any failure releases `chunks` through its iterator's `return()`.
 */
export async function* runtimeEvents(chunks: AsyncIterable<Uint8Array>, options: EventStreamOptions): AsyncGenerator<RuntimeEvent, void, undefined> {
  const iterator = chunks[Symbol.asyncIterator]();
  const splitter = new NdjsonLineSplitter();
  const state: StreamState = { sawError: false, runStartedAt: null };
  const fail = (error: ErrorEvent): RuntimeEvent[] => (state.sawError ? [endEvent(state, options)] : [error, endEvent(state, options)]);
  let exhausted = false;
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await iterator.next();
      } catch (error) {
        exhausted = true; // a failed iterator is finished; return() would only repeat the failure
        yield* fail(options.classifyFailure(error));
        return;
      }
      if (step.done) {
        exhausted = true;
        break;
      }
      const lines = chunkLines(splitter, step.value);
      if (!Array.isArray(lines)) {
        yield* fail(lines);
        return;
      }
      for (const line of lines) {
        const outcome = yield* relayLine(line, state, options, fail);
        if (outcome === 'end') {
          exhausted = await drainRest(iterator, options.drainMs ?? 2000);
          return;
        }
        if (outcome === 'abandon') return;
      }
    }
    const last = splitter.flush();
    if (last !== null && (yield* relayLine(last, state, options, fail)) !== 'more') return;
    yield* fail(options.truncated());
  } finally {
    if (!exhausted) await settleQuietly(iterator.return?.());
  }
}

/** Reads what follows `end` (the chunked terminator, Lambda's InvokeComplete); true when the body finished in time. */
async function drainRest(iterator: AsyncIterator<Uint8Array>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
    timer.unref();
  });
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), timeout]);
      if (step === 'timeout') return false;
      if (step.done) return true;
    }
  } catch {
    return true; // the iterator failed after `end`: nothing is left to release
  } finally {
    clearTimeout(timer);
  }
}

async function settleQuietly(promise: Promise<unknown> | undefined): Promise<void> {
  try {
    await promise;
  } catch {
    // releasing a broken stream may fail again; the run's outcome is already reported
  }
}

/** Yields what one line means: `end` after the runtime's end, `abandon` after a protocol error. */
async function* relayLine(
  line: string,
  state: StreamState,
  options: EventStreamOptions,
  fail: (error: ErrorEvent) => RuntimeEvent[],
): AsyncGenerator<RuntimeEvent, 'more' | 'end' | 'abandon', undefined> {
  const parsed = parseRuntimeLine(line);
  switch (parsed.kind) {
    case 'start':
      // The runtime sends at most one; a second could not make the run start earlier.
      state.runStartedAt ??= Date.now();
      options.onStart?.(parsed.pid);
      return 'more';
    case 'invalid':
      yield* fail(errorEvent(COMPUTE_ERROR.protocol, `the runtime sent an invalid event (${parsed.reason})`));
      return 'abandon';
    case 'ignored':
      return 'more';
    case 'end':
      options.onRuntimeEnd?.();
      yield endEvent(state, options, parsed);
      return 'end';
    case 'event':
      if (parsed.event.type === 'error') {
        if (state.sawError) return 'more';
        state.sawError = true;
      }
      yield parsed.event;
      return 'more';
  }
}

function chunkLines(splitter: NdjsonLineSplitter, chunk: Uint8Array): string[] | ErrorEvent {
  try {
    return splitter.push(chunk);
  } catch (error) {
    if (error instanceof LineTooLongError) return errorEvent(COMPUTE_ERROR.protocol, error.message);
    throw error;
  }
}
