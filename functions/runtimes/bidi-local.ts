/**
 * Voice sessions on the local OS sandbox: one Python process per call
 * (`platform_runtime.bidi_session`), inside bubblewrap like every runtime server (own uid and
 * namespaces, no network, read-only system), its outbound HTTP through the egress proxy with a
 * credential of this session alone. A session is a process rather than a run of the tenant's
 * runtime server because it lasts minutes and streams both ways; the server's fork-per-request
 * protocol carries neither. Lines of JSON go over stdin and stdout (audio in base64).
 *
 * Spares (`spares`, one in the platform): the process imports the voice framework before it reads
 * its session (Strands must be imported before the sandbox is installed), which takes seconds, so
 * processes are started ahead of need and wait on their stdin. Nothing of a spare is a tenant's:
 * the sandbox, the environment and the control directory are the same for everyone, and it has run
 * no code. Its uid cannot change once it runs, so a spare has a uid of its own, with its own
 * process limit, which nobody else shares while it lives (a session started without a spare runs
 * as its tenant's uid). Claiming one opens the tenant's egress listener (the spare's forwarder connects to its
 * path per connection, so the socket can appear later) and a grant of this session alone, then
 * writes the session line, which carries the tenant's source, environment and limits; the sandbox
 * is installed only then. A claimed process serves that one session and exits with it. A spare
 * that dies is replaced, never handed out; `close()` stops spares and sessions alike.
 */
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../core/logger.ts';
import { SecretSet } from '../core/secret-scope.ts';
import { PUBLIC_RUN_ENV, type BidiEvent, type BidiSession, type BidiSessionSpec } from './compute.ts';
import type { EgressListener, EgressProxy } from './egress-proxy.ts';
import { spawnPlan, unreadableBy, type ControlDir, type OsSandbox, type SandboxUser } from './os-sandbox.ts';
import { signalGroup, waitForGroupGone } from './process-group.ts';
import type { PythonInterpreter } from './python-interpreter.ts';

/** Size of a session's private /tmp: a call needs no files. */
const SESSION_TMP_BYTES = 16 * 1024 * 1024;
/** Caller audio waiting for the process beyond this is dropped (about 30 s of 16 kHz PCM in base64). */
const MAX_PENDING_STDIN_BYTES = 1_300_000;
/** One line from the process longer than this ends the session (a protocol failure). */
const MAX_LINE_BYTES = 8 * 1024 * 1024;
const EGRESS_SOCKET = 'egress.sock';

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

export interface BidiSessionsOptions {
  /** Processes kept started and preloaded for the next sessions (default 0: each session starts its own). */
  readonly spares?: number;
}

/** Voice sessions' processes: the spares waiting for a session and the sessions running. */
export interface BidiSessions {
  /** One session of `tenantId`: a spare claimed when there is one, else a process started for it. */
  open(tenantId: string, spec: BidiSessionSpec): Promise<BidiSession>;
  /** Starts the missing spares; resolves once each has started (is waiting for its session) or failed. */
  warm(): Promise<void>;
  /** The processes alive now: spares (no tenant) and sessions; the pid is also the process group's. */
  processes(): { readonly pid: number; readonly role: 'spare' | 'session'; readonly tenantId: string | null }[];
  /** Stops every spare and session and waits until their process groups are gone; later `open`s fail. */
  close(): Promise<void>;
}

/** A session process before and after it is claimed: its output goes to whoever holds it now. */
interface SessionProcess {
  readonly child: ChildProcess;
  readonly dir: ControlDir;
  /** Who it runs as; given back once its group is gone. */
  readonly user: SandboxUser;
  /** Resolves true once the process is preloaded and waiting for its session, false if it went first. */
  readonly waiting: Promise<boolean>;
  /** Resolves once the process has exited (or could not be spawned), its group is stopped and its directory removed. */
  readonly gone: Promise<void>;
  /** How it ended, once it has: exited, or could not be spawned. */
  readonly exit: () => { readonly spawned: boolean; readonly message: string } | null;
  /** Receives stdout lines once claimed; before, only the `waiting` line is looked for. */
  onLine: ((line: string) => void) | null;
  /** Whose session it runs, for its stderr lines in the logs. */
  tenantId: string | null;
  /** Every secret handed to the process (it runs one session), scrubbed from its output. */
  readonly secrets: SecretSet;
}

/**
 * The voice sessions of the local compute adapter. `deps` is asked for each process started (it
 * waits for the sandbox check and the interpreter lookup the runtime servers share); when it
 * rejects, spares are not started and `open` rejects with its error.
 */
export function createBidiSessions(deps: () => Promise<BidiSandboxDeps>, options: BidiSessionsOptions = {}): BidiSessions {
  const wanted = options.spares ?? 0;
  const spares: SessionProcess[] = [];
  /** Every process not yet gone, spares and sessions, for `close()`. */
  const live = new Set<SessionProcess>();
  const starting = new Set<Promise<void>>();
  let closed = false;

  /** A process for `tenantId`'s session, or a spare (null). */
  async function startProcess(ready: BidiSandboxDeps, tenantId: string | null): Promise<SessionProcess> {
    const { sandbox, python, runtimeDir, pythonPath } = ready;
    const user = sandbox.user(tenantId);
    let dir: ControlDir | null = null;
    try {
      dir = await sandbox.makeControlDir(user);
      const plan = sandbox.plan(python.executable, ['-m', 'platform_runtime.bidi_session', '--egress-socket', dir.inside(EGRESS_SOCKET)], {
        readOnly: [runtimeDir, ...python.roots, ...pythonPath],
        controlDir: dir.hostPath,
        cwd: runtimeDir,
        env: { ...ready.baseEnv, ...(pythonPath.length ? { PYTHONPATH: pythonPath.join(':') } : {}) },
        tmpfsBytes: SESSION_TMP_BYTES,
        user,
      });
      const blocked = await unreadableBy(python.executable, plan.uid);
      if (blocked !== null) throw new Error(`the sandbox's user cannot reach the Python interpreter: ${blocked}`);
      if (closed) throw new Error(CLOSED);
      return watch(spawnPlan(plan, []), dir, user, ready.logger);
    } catch (error) {
      await dir?.remove().catch(() => undefined);
      user.release();
      throw error;
    }
  }

  /** Follows a started process: its lines, its stderr, its end, its group and directory afterwards. */
  function watch(child: ChildProcess, dir: ControlDir, user: SandboxUser, logger: Logger | undefined): SessionProcess {
    let announce: (waiting: boolean) => void = () => {};
    let ended: { spawned: boolean; message: string } | null = null;
    const exited = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        ended ??= { spawned: false, message: `the voice runtime could not be started (${error.message})` };
        resolve();
      });
      child.once('close', (code, signal) => {
        ended ??= { spawned: true, message: `the voice runtime stopped (${signal ?? `exit ${code}`})` };
        resolve();
      });
    });
    const proc: SessionProcess = {
      child,
      dir,
      user,
      waiting: new Promise<boolean>((resolve) => (announce = resolve)),
      gone: exited.then(async () => {
        announce(false);
        // Whatever it left behind in its group (the egress forwarder) goes with it, before its uid
        // can serve anyone else.
        if (child.pid !== undefined) {
          signalGroup(child.pid, 'SIGKILL');
          await waitForGroupGone(child.pid);
        }
        await dir.remove().catch(() => undefined);
        user.release();
        live.delete(proc);
      }),
      exit: () => ended,
      onLine: null,
      tenantId: null,
      secrets: new SecretSet(),
    };
    live.add(proc);
    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      if (pending.length > MAX_LINE_BYTES) {
        pending = '';
        proc.onLine?.(JSON.stringify({ type: 'error', code: 'PROTOCOL_ERROR', message: 'the voice runtime sent an oversized line' }));
        if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
        return;
      }
      for (let cut = pending.indexOf('\n'); cut >= 0; cut = pending.indexOf('\n')) {
        const line = pending.slice(0, cut);
        pending = pending.slice(cut + 1);
        if (proc.onLine !== null) proc.onLine(line);
        else if (line === WAITING_LINE) announce(true);
      }
    });
    child
      .stderr!.setEncoding('utf8')
      .on('data', (chunk: string) =>
        logger?.warn('voice runtime stderr', { tenantId: proc.tenantId, pid: child.pid, line: proc.secrets.scrub(chunk).slice(0, 2000) }),
      );
    child.stdin!.on('error', () => undefined);
    return proc;
  }

  /** Starts spares until `wanted` are there or starting. */
  function refill(): void {
    while (!closed && spares.length + starting.size < wanted) {
      const start = deps().then(
        (ready) =>
          startProcess(ready, null).then(
            (proc) => keepSpare(proc, ready.logger),
            (error: unknown) => ready.logger?.warn('a spare voice runtime could not be started', { reason: messageOf(error) }),
          ),
        // No sandbox or no interpreter: the platform's preflight says so once, and every session too.
        () => undefined,
      );
      starting.add(start);
      void start.finally(() => starting.delete(start));
    }
  }

  function keepSpare(proc: SessionProcess, logger: Logger | undefined): void {
    if (closed) return;
    spares.push(proc);
    void proc.waiting.then(async (waited) => {
      await proc.gone;
      const index = spares.indexOf(proc);
      if (index < 0) return; // claimed, or the sessions were closed
      spares.splice(index, 1);
      logger?.warn('a spare voice runtime stopped before it was used', { reason: proc.exit()?.message ?? 'unknown' });
      // One that never got as far as waiting is not restarted in a loop: the next session's own
      // start says what is wrong.
      if (waited) refill();
    });
  }

  /** The oldest spare still alive; one still preloading is taken too, being ahead of a new process. */
  function takeSpare(): SessionProcess | null {
    for (let proc = spares.shift(); proc !== undefined; proc = spares.shift()) {
      if (proc.exit() === null && proc.child.exitCode === null && proc.child.signalCode === null) return proc;
    }
    return null;
  }

  return {
    async open(tenantId, spec) {
      if (closed) throw new Error(CLOSED);
      const spare = takeSpare();
      refill();
      const ready = await deps();
      const proc = spare ?? (await startProcess(ready, tenantId));
      try {
        return await claim(proc, tenantId, spec, ready);
      } catch (error) {
        if (proc.child.pid !== undefined) signalGroup(proc.child.pid, 'SIGKILL');
        await proc.gone;
        throw error;
      }
    },
    async warm() {
      refill();
      await Promise.all([...starting]);
      await Promise.all(spares.map((proc) => proc.waiting));
    },
    processes() {
      return [...live].flatMap((proc) =>
        proc.child.pid === undefined || proc.exit() !== null
          ? []
          : [{ pid: proc.child.pid, role: proc.onLine === null ? ('spare' as const) : ('session' as const), tenantId: proc.tenantId }],
      );
    },
    async close() {
      closed = true;
      await Promise.all([...starting]);
      spares.length = 0;
      const all = [...live];
      for (const proc of all) if (proc.child.pid !== undefined) signalGroup(proc.child.pid, 'SIGKILL');
      await Promise.all(
        all.map(async (proc) => {
          if (proc.child.pid !== undefined) await waitForGroupGone(proc.child.pid);
          await proc.gone;
        }),
      );
    },
  };
}

const CLOSED = 'the voice sessions are closed: the platform is shutting down';
/** What bidi_session.py says once preloaded, before it reads its session line. */
const WAITING_LINE = '{"type":"waiting"}';

/**
 * Gives `proc` to one session of `tenantId`: the egress listener that names the tenant's traffic
 * and a credential of this session alone, then the session line.
 */
async function claim(proc: SessionProcess, tenantId: string, spec: BidiSessionSpec, deps: BidiSandboxDeps): Promise<BidiSession> {
  const tenantKey = `voice:${tenantId}`;
  let listener: EgressListener | null = null;
  let grant: ReturnType<EgressProxy['openRun']> | null = null;
  try {
    listener = await deps.egress.listen(proc.dir.onHost(EGRESS_SOCKET), tenantKey);
    const { platformCalls } = spec;
    grant = deps.egress.openRun(tenantKey, { allowHosts: spec.allowHosts, ...(platformCalls ? { platformCalls } : {}) });
  } catch (error) {
    grant?.release();
    await listener?.close().catch(() => undefined);
    throw error;
  }
  proc.tenantId = tenantId;
  const secrets = proc.secrets;
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
  const openedListener = listener;
  const openedGrant = grant;
  const supervised = superviseSession(proc, async () => {
    openedGrant.release();
    await openedListener.close().catch(() => undefined);
  });
  proc.child.stdin!.write(`${JSON.stringify(session)}\n`);
  return supervised;
}

function superviseSession(proc: SessionProcess, release: () => Promise<void>): BidiSession {
  const { child, secrets } = proc;
  const pgid = child.pid;
  const { push, sawEnd, events } = bidiEventQueue();
  proc.onLine = (line) => {
    const event = parseBidiLine(line, secrets);
    if (event !== null) push(event);
  };
  const gone = proc.gone.then(async () => {
    const exit = proc.exit();
    if (!sawEnd()) {
      push({ type: 'error', code: exit?.spawned === false ? 'RUNTIME_UNAVAILABLE' : 'RUNTIME_CRASHED', message: exit?.message ?? 'the voice runtime stopped' });
    }
    push({ type: 'end' });
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
