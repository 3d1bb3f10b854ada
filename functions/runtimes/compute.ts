/**
 * The Compute port: runs user code (Python agents and actions) in the runtime server of
 * `python-runtime/` (protocol in its README). Locally an adapter keeps one runtime process per
 * tenant; in the cloud an adapter invokes the runtime Lambda with the owner as tenant id.
 */

/** A message in the agent framework's format, restored into `agent.messages`. */
export interface FrameworkMessage {
  readonly role: 'user' | 'assistant';
  /** Content blocks as the framework wrote them: `{text}`, `{toolUse}`, `{toolResult}`, images... */
  readonly content: readonly Readonly<Record<string, unknown>>[];
}

/**
 * Run variables that name things rather than hold secrets: every other `env` value is scrubbed
 * from what the run's process prints. The Python runtime keeps the same list (redact.py).
 */
export const PUBLIC_RUN_ENV: readonly string[] = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'SVC_AGENT_ID',
  'SVC_CONVERSATION_ID',
  'SVC_ACTION_ID',
  'SVC_PLATFORM_MCP_URL',
];

interface InvokeBase {
  readonly source: string;
  readonly requestId: string;
  /** Shown to user code as `context.function_name` (actions) and in runtime logs. */
  readonly functionName: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
  /** Environment of the run only (e.g. `SVC_KEYS_JSON`); never the platform's own. */
  readonly env: Readonly<Record<string, string>>;
  /** Hosts user code may connect to; everything else is refused by the sandbox. */
  readonly allowHosts: readonly string[];
  /**
   * Headers the runtime adds to requests the run makes to the platform's own hosts (the owner's
   * short-lived credential, the run's lineage); user code can make those calls but never reads them.
   */
  readonly platformCalls?: { readonly hosts: readonly string[]; readonly headers: Readonly<Record<string, string>> };
  /**
   * Set by an adapter whose runtime has no network of its own (the local OS sandbox): the run's
   * HTTP(S) proxy, `http://run:<credential>@127.0.0.1:<port>`. The platform's proxy then enforces
   * `allowHosts` and adds the `platformCalls` headers, which never enter the sandbox.
   */
  readonly egressProxy?: string;
}

export interface AgentInvocation extends InvokeBase {
  readonly kind: 'agent';
  readonly prompt: string;
  readonly messages: readonly FrameworkMessage[];
}

export interface ActionInvocation extends InvokeBase {
  readonly kind: 'action';
  readonly event: Readonly<Record<string, unknown>>;
}

export type Invocation = AgentInvocation | ActionInvocation;

/** Events a run streams, in order; the last is always `end`. */
export type RuntimeEvent =
  | { readonly type: 'text'; readonly data: string }
  | { readonly type: 'tool'; readonly name: string; readonly toolUseId?: string }
  | {
      readonly type: 'metrics';
      readonly totalCycles: number;
      readonly totalTokens: number;
      readonly inputTokens?: number;
      readonly outputTokens?: number;
      readonly toolsUsed: readonly string[];
      readonly durationMs: number;
    }
  | { readonly type: 'messages'; readonly messages: readonly unknown[] }
  | { readonly type: 'result'; readonly statusCode: number; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly type: 'log'; readonly stream: string; readonly data: string }
  | {
      readonly type: 'error';
      readonly code: string;
      readonly message: string;
      readonly line?: number;
      readonly errorType?: string;
      /** With `SOURCE_REJECTED`: every rule the source breaks (the runtime re-checks each source). */
      readonly violations?: readonly SourceViolation[];
    }
  | {
      readonly type: 'end';
      /**
       * Whether user code started, as this side observed it: the runtime's `start` event (sent once
       * the child that runs the code exists, before the code gets its request) arrived. False for
       * runs refused before that (no runtime, capacity, a rejected source) and for the adapters' own
       * failures; such a run is never billed. Whatever the run's error code says, a run that started
       * is billed for its time, since those codes travel on a stream user code shares.
       */
      readonly started: boolean;
      /**
       * Wall time by this side's clock, never the runtime's figure: from the `start` event to the
       * end when the run started (a cold start of the runtime is not the run's), else from the
       * call. What billing uses.
       */
      readonly durationMs: number;
      /** The runtime's own figure, for logs only. */
      readonly runtimeDurationMs?: number;
      readonly maxRssKb?: number;
    };

export interface SourceViolation {
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

/**
 * `check` could not be done because no runtime can be had (no interpreter, no sandbox): the
 * message says what is missing. Callers answer "unavailable" rather than an internal error.
 */
export class ComputeUnavailableError extends Error {
  override readonly name = 'ComputeUnavailableError';
}

export interface Compute {
  /** Static check of a source against SPEC part 2 (imports allowlist, no escape routes). */
  check(source: string): Promise<{ ok: boolean; violations: SourceViolation[] }>;
  /**
   * Runs one invocation for `tenantId` (the resource owner) and yields its events as they happen.
   * Aborting `signal` kills the run. Transport failures end with an `error` event, never a throw.
   */
  invoke(tenantId: string, invocation: Invocation, signal?: AbortSignal): AsyncIterable<RuntimeEvent>;
}

/** What a voice (bidi) session's process runs: the agent, its keys and its limits. */
export interface BidiSessionSpec {
  readonly source: string;
  readonly requestId: string;
  /** Environment of the session only (`SVC_KEYS_JSON`, the owner's model credentials). */
  readonly env: Readonly<Record<string, string>>;
  readonly allowHosts: readonly string[];
  readonly platformCalls?: { readonly hosts: readonly string[]; readonly headers: Readonly<Record<string, string>> };
  readonly memoryMb: number;
  /** The longest the session may last; the process's CPU limit follows it. */
  readonly maxSeconds: number;
  /** `voice_1`, `voice_2` or `voice_3`. */
  readonly voice: string;
  /** Sent as text right after `start()`, so the agent speaks first. */
  readonly initialPrompt: string | null;
}

/** What a voice session's process reports (python-runtime/platform_runtime/bidi_session.py); the last is `end`. */
export type BidiEvent =
  | { readonly type: 'started' }
  | { readonly type: 'audio'; readonly audio: Buffer; readonly sampleRate: number }
  | { readonly type: 'transcript'; readonly text: string; readonly role: string; readonly isFinal: boolean }
  | { readonly type: 'interruption' }
  | { readonly type: 'responseComplete' }
  | { readonly type: 'usage'; readonly inputTokens?: number; readonly outputTokens?: number; readonly totalTokens?: number }
  | { readonly type: 'tool'; readonly name: string }
  | { readonly type: 'log'; readonly stream: string; readonly data: string }
  | { readonly type: 'error'; readonly code: string; readonly message: string }
  | { readonly type: 'end' };

/** A running voice session's process, one per call. */
export interface BidiSession {
  /** Events in order; ends after `end` (also when the process died: an `error` then `end`). */
  readonly events: AsyncIterable<BidiEvent>;
  /** PCM16LE 16 kHz mono from the caller. False when the process is not keeping up and the frame was dropped. */
  sendAudio(pcm: Buffer): boolean;
  sendText(text: string): void;
  /** The caller is done: the agent is stopped and the process exits. */
  end(): void;
  /** Stops the process group at once (billing ran out, limits, shutdown); resolves when it is gone. */
  kill(): Promise<void>;
  /** Resolves once the process has exited and what it held is released. */
  readonly exited: Promise<void>;
}

/** Compute adapters that can hold voice sessions (the local OS sandbox, and the voice service's tasks). */
export interface BidiCompute {
  openBidiSession(tenantId: string, spec: BidiSessionSpec): Promise<BidiSession>;
}

/** Whether `compute` can hold voice sessions. */
export function canHoldBidiSessions(compute: Compute): compute is Compute & BidiCompute {
  return typeof (compute as Partial<BidiCompute>).openBidiSession === 'function';
}

/** Where a handed-over session's runtime connects back to the bridge, and the one-time token it shows. */
export interface BidiHandoff {
  readonly url: string;
  readonly token: string;
}

/**
 * Compute adapters that hand voice sessions to the runtime function (the cloud): the runtime starts
 * the session's process and connects back to the bridge at `handoff.url` for the audio.
 */
export interface RemoteBidiCompute {
  /** Resolves when the runtime's invocation is over (the call ended); rejects when it could not be made. */
  handOffBidiSession(tenantId: string, spec: BidiSessionSpec, handoff: BidiHandoff): Promise<void>;
}

export function canHandOffBidiSessions(compute: Compute): compute is Compute & RemoteBidiCompute {
  return typeof (compute as Partial<RemoteBidiCompute>).handOffBidiSession === 'function';
}
