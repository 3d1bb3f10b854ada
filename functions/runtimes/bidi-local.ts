/**
 * Voice sessions on the local OS sandbox: one Python process per call
 * (`platform_runtime.bidi_session`), inside bubblewrap like every runtime server (own uid and
 * namespaces, no network, read-only system), its outbound HTTP through the egress proxy with a
 * credential of this session alone. A session is a process rather than a run of the tenant's
 * runtime server because it lasts minutes and streams both ways; the server's fork-per-request
 * protocol carries neither. Lines of JSON go over stdin and stdout (audio in base64).
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../core/logger.ts';
import { SecretSet } from '../core/secret-scope.ts';
import { PUBLIC_RUN_ENV, type BidiEvent, type BidiSession, type BidiSessionSpec } from './compute.ts';
import type { EgressProxy } from './egress-proxy.ts';
import { spawnPlan, unreadableBy, type OsSandbox } from './os-sandbox.ts';
import { signalGroup, waitForGroupGone } from './process-group.ts';
import type { PythonInterpreter } from './python-interpreter.ts';

/** Size of a session's private /tmp: a call needs no files. */
const SESSION_TMP_BYTES = 16 * 1024 * 1024;
/** Caller audio waiting for the process beyond this is dropped (about 30 s of 16 kHz PCM in base64). */
const MAX_PENDING_STDIN_BYTES = 1_300_000;
/** One line from the process longer than this ends the session (a protocol failure). */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface BidiSandboxDeps {
  readonly sandbox: OsSandbox;
  readonly python: PythonInterpreter;
  readonly egress: EgressProxy;
  readonly runtimeDir: string;
  readonly pythonPath: readonly string[];
  /** The environment every runtime process starts with. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly logger?: Logger;
}

/** Starts one session's process; rejects when the sandbox cannot reach what it needs. */
export async function startBidiSession(deps: BidiSandboxDeps, tenantId: string, spec: BidiSessionSpec): Promise<BidiSession> {
  const { sandbox, python } = deps;
  const dir = await sandbox.makeControlDir();
  const tenantKey = `voice:${tenantId}`;
  let listener: Awaited<ReturnType<EgressProxy['listen']>> | null = null;
  let grant: ReturnType<EgressProxy['openRun']> | null = null;
  try {
    listener = await deps.egress.listen(dir.onHost('egress.sock'), tenantKey);
    const { platformCalls } = spec;
    grant = deps.egress.openRun(tenantKey, { allowHosts: spec.allowHosts, ...(platformCalls ? { platformCalls } : {}) });
    const plan = sandbox.plan(python.executable, ['-m', 'platform_runtime.bidi_session', '--egress-socket', dir.inside('egress.sock')], {
      readOnly: [deps.runtimeDir, ...python.roots, ...deps.pythonPath],
      controlDir: dir.hostPath,
      cwd: deps.runtimeDir,
      env: { ...deps.baseEnv, ...(deps.pythonPath.length ? { PYTHONPATH: deps.pythonPath.join(':') } : {}) },
      tmpfsBytes: SESSION_TMP_BYTES,
    });
    const blocked = await unreadableBy(python.executable, plan.uid);
    if (blocked !== null) throw new Error(`the sandbox's user cannot reach the Python interpreter: ${blocked}`);
    const secrets = new SecretSet();
    secrets.addValuesOf(spec.env, PUBLIC_RUN_ENV);
    secrets.add(grant.credential);
    const session = {
      source: spec.source,
      env: spec.env,
      allowHosts: spec.allowHosts,
      egressCredential: grant.credential,
      memoryMb: spec.memoryMb,
      maxSeconds: spec.maxSeconds,
      voice: spec.voice,
      initialPrompt: spec.initialPrompt,
      readRoots: [...deps.pythonPath],
      nonce: randomBytes(4).toString('hex'),
    };
    const child = spawnPlan(plan, [JSON.stringify(session)]);
    const openedListener = listener;
    const openedGrant = grant;
    return superviseSession(child, secrets, deps.logger, async () => {
      openedGrant.release();
      await openedListener.close().catch(() => undefined);
      await dir.remove().catch(() => undefined);
    });
  } catch (error) {
    grant?.release();
    await listener?.close().catch(() => undefined);
    await dir.remove().catch(() => undefined);
    throw error;
  }
}

function superviseSession(child: ChildProcess, secrets: SecretSet, logger: Logger | undefined, release: () => Promise<void>): BidiSession {
  const pgid = child.pid;
  const { push, sawEnd, events } = bidiEventQueue();
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    if (pending.length > MAX_LINE_BYTES) {
      push({ type: 'error', code: 'PROTOCOL_ERROR', message: 'the voice runtime sent an oversized line' });
      void kill();
      return;
    }
    for (let cut = pending.indexOf('\n'); cut >= 0; cut = pending.indexOf('\n')) {
      const line = pending.slice(0, cut);
      pending = pending.slice(cut + 1);
      const event = parseBidiLine(line, secrets);
      if (event !== null) push(event);
    }
  });
  child
    .stderr!.setEncoding('utf8')
    .on('data', (chunk: string) => logger?.warn('voice runtime stderr', { pid: child.pid, line: secrets.scrub(chunk).slice(0, 2000) }));
  child.stdin!.on('error', () => undefined);
  const gone = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      push({ type: 'error', code: 'RUNTIME_UNAVAILABLE', message: `the voice runtime could not be started (${error.message})` });
      resolve();
    });
    child.once('close', (code, signal) => {
      if (!sawEnd()) push({ type: 'error', code: 'RUNTIME_CRASHED', message: `the voice runtime stopped (${signal ?? `exit ${code}`})` });
      resolve();
    });
  }).then(async () => {
    push({ type: 'end' });
    if (pgid !== undefined) signalGroup(pgid, 'SIGKILL');
    await release();
  });

  const write = (message: object): boolean => {
    const stdin = child.stdin!;
    if (stdin.destroyed || stdin.writableEnded) return false;
    return stdin.write(`${JSON.stringify(message)}\n`);
  };
  async function kill(): Promise<void> {
    if (pgid !== undefined) {
      signalGroup(pgid, 'SIGKILL');
      await waitForGroupGone(pgid);
    }
    await gone;
  }

  return {
    events,
    sendAudio(pcm) {
      // A process that does not keep up loses caller audio rather than holding it without bound.
      if (child.stdin!.writableLength > MAX_PENDING_STDIN_BYTES) return false;
      write({ type: 'audio', audio: pcm.toString('base64') });
      return true;
    },
    sendText(text) {
      write({ type: 'text', text });
    },
    end() {
      if (!child.stdin!.writableEnded) {
        write({ type: 'end' });
        child.stdin!.end();
      }
    },
    kill,
    exited: gone,
  };
}

/**
 * Events in arrival order for one consumer; after `end` nothing more is taken. Shared by the
 * local process and a session handed to the runtime function (its lines come over a WebSocket).
 */
export function bidiEventQueue(): { push(event: BidiEvent): void; readonly sawEnd: () => boolean; events: AsyncGenerator<BidiEvent> } {
  const queue: BidiEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  let ended = false;
  async function* events(): AsyncGenerator<BidiEvent> {
    try {
      for (;;) {
        const event = queue.shift();
        if (event !== undefined) {
          yield event;
          if (event.type === 'end') return;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      finished = true;
    }
  }
  return {
    push(event) {
      if (finished || ended) return;
      if (event.type === 'end') ended = true;
      queue.push(event);
      wake?.();
    },
    sawEnd: () => ended,
    events: events(),
  };
}

/** One line of a session's process as an event; lines that are not the protocol's are dropped. */
export function parseBidiLine(line: string, secrets: SecretSet): BidiEvent | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  switch (raw['type']) {
    case 'started':
    case 'interruption':
    case 'responseComplete':
    case 'end':
      return { type: raw['type'] };
    case 'audio':
      return { type: 'audio', audio: Buffer.from(text(raw['audio']), 'base64'), sampleRate: Number(raw['sampleRate']) || 24000 };
    case 'transcript':
      return { type: 'transcript', text: text(raw['text']), role: text(raw['role']) || 'assistant', isFinal: raw['isFinal'] === true };
    case 'usage': {
      const count = (name: string) => (typeof raw[name] === 'number' ? { [name]: raw[name] as number } : {});
      return { type: 'usage', ...count('inputTokens'), ...count('outputTokens'), ...count('totalTokens') };
    }
    case 'tool':
      return { type: 'tool', name: text(raw['name']) };
    case 'log':
      return { type: 'log', stream: text(raw['stream']), data: secrets.scrub(text(raw['data'])) };
    case 'error':
      return { type: 'error', code: text(raw['code']) || 'AGENT_EXECUTION_FAILED', message: secrets.scrub(text(raw['message'])) };
    default:
      return null;
  }
}
