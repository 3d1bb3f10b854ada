import type { Ports } from '../../functions/ports.ts';
import { percentile } from './stats.ts';

/**
 * Where one request's milliseconds go: every store call (DynamoDB command, blob operation) and
 * every runtime call the platform makes while a traced request is in flight, as spans relative to
 * the request's start. Requests are traced one at a time, so whatever runs meanwhile is theirs.
 * The instrumentation is attached only for the traced requests and removed after, so the other
 * rows of a bench module are measured without it.
 */
export interface Span {
  readonly label: string;
  readonly start: number;
  readonly end: number;
}

/** A named instant of a traced request (the runtime's first event, the body's first byte). */
export interface Mark {
  readonly label: string;
  readonly at: number;
}

export interface Trace {
  readonly spans: readonly Span[];
  readonly marks: readonly Mark[];
  /** The request's own end, relative to its start. */
  readonly end: number;
}

export interface Tracer {
  /** Runs one request with tracing on; `request` resolves when its response has been read in full. */
  trace(request: () => Promise<unknown>): Promise<Trace>;
  /** Records an instant of the request in flight (ignored outside `trace`). */
  mark(label: string): void;
  /** Removes every piece of instrumentation. */
  detach(): void;
}

const MIDDLEWARE = 'benchStoreTrace';

/**
 * Instruments `ports`: the DynamoDB document client (a middleware, labelled `table.Command`), the
 * blob store's methods, `mcpRuntime.handle` and `compute.invoke` (marks `runtime first event`).
 */
export function attachTracer(ports: Ports): Tracer {
  let current: { startedAt: number; spans: Span[]; marks: Mark[] } | null = null;
  const now = () => performance.now();
  const span = (label: string, startedAt: number) => {
    const trace = current;
    if (trace !== null) trace.spans.push({ label, start: startedAt - trace.startedAt, end: now() - trace.startedAt });
  };
  const mark = (label: string) => {
    const trace = current;
    if (trace !== null) trace.marks.push({ label, at: now() - trace.startedAt });
  };
  const prefix = ports.config.TABLE_PREFIX;
  const restore: (() => void)[] = [];

  ports.db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const startedAt = now();
      const input = args.input as { TableName?: unknown; RequestItems?: Record<string, unknown>; TransactItems?: unknown[] };
      const named = typeof input.TableName === 'string' ? [input.TableName] : input.RequestItems ? Object.keys(input.RequestItems) : [];
      const table =
        named.length > 0 ? named.map((name) => (name.startsWith(prefix) ? name.slice(prefix.length) : name)).join('+') : input.TransactItems ? 'transact' : '?';
      const command = String(context.commandName ?? 'Command').replace(/Command$/, '');
      try {
        return await next(args);
      } finally {
        span(`${table}.${command}`, startedAt);
      }
    },
    { step: 'initialize', name: MIDDLEWARE, override: true },
  );
  restore.push(() => void ports.db.doc.middlewareStack.remove(MIDDLEWARE));

  const blobs = ports.blobs as { -readonly [K in keyof Ports['blobs']]: Ports['blobs'][K] };
  for (const method of ['get', 'put', 'delete'] as const) {
    const original = blobs[method];
    blobs[method] = (async (...args: unknown[]) => {
      const startedAt = now();
      try {
        return await (original as (...a: unknown[]) => Promise<unknown>).apply(blobs, args);
      } finally {
        span(`blobs.${method}`, startedAt);
      }
    }) as never;
    restore.push(() => (blobs[method] = original as never));
  }

  const mcpRuntime = ports.mcpRuntime as { handle: Ports['mcpRuntime']['handle'] };
  const handle = mcpRuntime.handle;
  mcpRuntime.handle = async (...args) => {
    const startedAt = now();
    try {
      return await handle.apply(ports.mcpRuntime, args);
    } finally {
      span('mcpRuntime.handle', startedAt);
    }
  };
  restore.push(() => (mcpRuntime.handle = handle));

  const compute = ports.compute as { invoke: Ports['compute']['invoke'] };
  const invoke = compute.invoke;
  compute.invoke = async function* (...args) {
    const startedAt = now();
    let first = true;
    try {
      for await (const event of invoke.apply(ports.compute, args)) {
        if (first) mark('runtime first event');
        first = false;
        yield event;
      }
    } finally {
      span('compute.invoke', startedAt);
    }
  };
  restore.push(() => (compute.invoke = invoke));

  return {
    async trace(request) {
      if (current !== null) throw new Error('one traced request at a time');
      const trace = { startedAt: now(), spans: [] as Span[], marks: [] as Mark[] };
      current = trace;
      try {
        await request();
        return { spans: trace.spans, marks: trace.marks, end: now() - trace.startedAt };
      } finally {
        current = null;
      }
    },
    mark,
    detach() {
      for (const undo of restore.reverse()) undo();
      restore.length = 0;
    },
  };
}

/** Store spans: everything but the runtime calls. */
export function storeSpans(trace: Trace): Span[] {
  return trace.spans.filter((s) => s.label !== 'mcpRuntime.handle' && s.label !== 'compute.invoke');
}

/** The span named `label` (the first one); throws when the request made none. */
export function spanOf(trace: Trace, label: string): Span {
  const found = trace.spans.find((s) => s.label === label);
  if (found === undefined) throw new Error(`the traced request made no ${label} call`);
  return found;
}

export function markOf(trace: Trace, label: string): number {
  const found = trace.marks.find((m) => m.label === label);
  if (found === undefined) throw new Error(`the traced request has no mark ${label}`);
  return found.at;
}

/**
 * The store calls of the requests' most common shape, in start order, each with its median
 * duration; calls that overlap are joined with `|`, calls one after another with `>`. With the
 * number of requests of that shape and the count of calls on the critical path (sequential steps).
 */
export function describeStoreCalls(traces: readonly Trace[], within: (trace: Trace, span: Span) => boolean = () => true): string {
  const shapes = new Map<string, Span[][]>();
  for (const trace of traces) {
    const spans = storeSpans(trace)
      .filter((s) => within(trace, s))
      .sort((a, b) => a.start - b.start);
    const key = spans.map((s) => s.label).join(',');
    shapes.set(key, [...(shapes.get(key) ?? []), spans]);
  }
  const [, runs] = [...shapes.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ['', []];
  const first = runs[0];
  if (first === undefined || first.length === 0) return 'no store calls';
  const medianOf = (i: number) => {
    const sorted = runs.map((spans) => spans[i]!.end - spans[i]!.start).sort((a, b) => a - b);
    return percentile(sorted, 50);
  };
  let text = '';
  let steps = 0;
  let reach = Number.NEGATIVE_INFINITY;
  first.forEach((s, i) => {
    const overlaps = i > 0 && s.start < reach;
    if (!overlaps) steps++;
    text += `${i === 0 ? '' : overlaps ? ' | ' : ' > '}${s.label} ${medianOf(i).toFixed(1)}`;
    reach = Math.max(overlaps ? reach : s.end, s.end);
  });
  return `${first.length} store calls, ${steps} sequential (${runs.length}/${traces.length} requests): ${text}`;
}
