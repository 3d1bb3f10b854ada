/**
 * Area modules and the ports they declare: each handler sees the kernel's ports and its own
 * area's, so a use its module does not declare fails locally instead of as a missing grant in the
 * cloud; and the manifest is derived from the module list without losing or doubling anything.
 */
import { describe, expect, it } from 'vitest';
import { portsForArea, UndeclaredPortError, type Ports } from '../../functions/ports.ts';
import { createPlatformTasks, MAX_TASK_BYTES, TaskSendError, type TaskQueue } from '../../functions/core/tasks/tasks.ts';
import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { areas, buckets, checkAreas, handlerModulePath, PORT_RESOURCES, resourcesOf, routes, tables } from '../../lib/manifest/index.ts';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, parseConfig } from '../../functions/core/config.ts';

/** A ports object whose members are labels: enough to see which ones a view lets through. */
function labelledPorts(): Ports {
  const provided = areas.flatMap((area) => Object.keys(area.provides));
  const names = ['config', 'clock', 'log', 'fetch', 'credentials', 'identity', 'runTokens', 'rateLimiter', 'db', ...Object.keys(PORT_RESOURCES), ...provided];
  return Object.fromEntries(names.map((name) => [name, { label: name }])) as unknown as Ports;
}

describe('portsForArea', () => {
  it("lets an area use its declared ports and the kernel's, and names the module to fix for any other", () => {
    // Prepare
    const ports = labelledPorts();
    const area = defineArea({ name: 'sample', uses: ['agents'] });

    // Act
    const view = portsForArea(ports, area);

    // Assess
    expect(view.agents).toBe(ports.agents);
    expect(view.credentials).toBe(ports.credentials);
    expect(view.clock).toBe(ports.clock);
    expect(() => view.actions).toThrow(UndeclaredPortError);
    expect(() => view.actions).toThrow('functions/sample/sample.module.ts');
    expect(() => view.db).toThrow(UndeclaredPortError);
  });

  it('leaves undeclared ports out of a spread copy, and sees members replaced later', () => {
    // Prepare
    const ports = labelledPorts();
    const view = portsForArea(ports, defineArea({ name: 'sample', uses: ['logs'] }));
    const replacement = (() => Promise.resolve(new Response())) as typeof fetch;

    // Act
    const copy = { ...view };
    (ports as { fetch: typeof fetch }).fetch = replacement;

    // Assess
    expect(Object.keys(copy).sort()).toEqual(['clock', 'config', 'credentials', 'fetch', 'identity', 'log', 'logs', 'rateLimiter', 'runTokens']);
    expect(view.fetch).toBe(replacement);
  });

  it('lets an area use the ports it provides without listing them in uses', () => {
    // Prepare
    const ports = labelledPorts();
    const owner = defineArea({ name: 'owner', provides: { agents: providePort({ tables: ['agents'] }, () => ({})) } });

    // Act
    const view = portsForArea(ports, owner);

    // Assess
    expect(view.agents).toBe(ports.agents);
    expect(() => view.actions).toThrow(UndeclaredPortError);
  });

  it('keeps one view per area module, so two modules of the same name do not share one', () => {
    // Prepare
    const ports = labelledPorts();
    const narrow = defineArea({ name: 'same', uses: [] });
    const wide = defineArea({ name: 'same', uses: ['keys'] });

    // Act
    const narrowView = portsForArea(ports, narrow);
    const wideView = portsForArea(ports, wide);

    // Assess
    expect(() => narrowView.keys).toThrow(UndeclaredPortError);
    expect(wideView.keys).toBe(ports.keys);
    expect(portsForArea(ports, narrow)).toBe(narrowView);
  });
});

describe('the tasks port', () => {
  /** Ports whose task queue records what it is handed. */
  function portsWithQueue() {
    const sent: { queue: string; body: string; delaySec: number }[] = [];
    const queue: TaskQueue = { enqueue: async (spec, body, delaySec) => (sent.push({ queue: spec.id, body, delaySec }), { taskId: `t${sent.length}` }) };
    const ports = { ...labelledPorts(), tasks: createPlatformTasks(queue) } as Ports;
    return { ports, sent };
  }
  const sender = defineArea({ name: 'sender', entryPoints: [{ kind: 'queue', handler: 'work' }], uses: ['tasks'] });
  const other = defineArea({
    name: 'other',
    entryPoints: [
      { kind: 'queue', handler: 'work' },
      { kind: 'queue', handler: 'theirs' },
    ],
    uses: ['tasks'],
  });

  it("sends to the area's own queue by handler name, as JSON, with its delay", async () => {
    // Prepare
    const { ports, sent } = portsWithQueue();

    // Act
    const result = await portsForArea(ports, sender).tasks.send('work', { n: 1, text: 'é' }, { delaySec: 30 });
    await portsForArea(ports, other).tasks.send('work', null);

    // Assess
    expect(result).toEqual({ taskId: 't1' });
    expect(sent).toEqual([
      { queue: 'sender.work', body: '{"n":1,"text":"é"}', delaySec: 30 },
      { queue: 'other.work', body: 'null', delaySec: 0 },
    ]);
  });

  it("refuses another area's queue, an unknown one, payloads that are not JSON or too large, bad delays, and sends outside a view", async () => {
    // Prepare
    const { ports, sent } = portsWithQueue();
    const tasks = portsForArea(ports, sender).tasks;

    // Act
    const attempts = [
      tasks.send('theirs', {}),
      tasks.send('other.theirs', {}),
      tasks.send('work', undefined),
      tasks.send('work', { n: 1n }),
      tasks.send('work', 'x'.repeat(MAX_TASK_BYTES)),
      tasks.send('work', {}, { delaySec: 901 }),
      tasks.send('work', {}, { delaySec: 1.5 }),
      ports.tasks.send('work', {}),
    ];
    const outcomes = await Promise.allSettled(attempts);

    // Assess
    expect(sent).toEqual([]);
    const messages = outcomes.map((o) => (o.status === 'rejected' && o.reason instanceof TaskSendError ? (o.reason as Error).message : 'not refused'));
    expect(messages[0]).toContain('The sender area has no queue entry point named "theirs"; an area sends tasks only to its own queues (work)');
    expect(messages[1]).toContain('no queue entry point named "other.theirs"');
    expect(messages[2]).toContain('must be a JSON value, not undefined');
    expect(messages[3]).toContain('cannot be written as JSON');
    expect(messages[4]).toContain(`is ${MAX_TASK_BYTES + 2} bytes of JSON; the limit is ${MAX_TASK_BYTES} (SQS)`);
    expect(messages[5]).toContain('from 0 to 900, not 901');
    expect(messages[6]).toContain('not 1.5');
    expect(messages[7]).toContain("through an area's view");
  });

  it('is an undeclared port for an area that does not list it', () => {
    // Prepare
    const { ports } = portsWithQueue();

    // Act
    const view = portsForArea(ports, defineArea({ name: 'quiet', entryPoints: [{ kind: 'queue', handler: 'work' }] }));

    // Assess
    expect(() => view.tasks).toThrow(UndeclaredPortError);
  });
});

describe('the manifest, derived from the area modules', () => {
  it("has every route, table and bucket of every module once, each route in its own area's folder", () => {
    // Assess
    expect(routes).toHaveLength(areas.reduce((n, a) => n + a.routes.length, 0));
    expect(new Set(routes.map((r) => `${r.method} ${r.host} ${r.path}`)).size).toBe(routes.length);
    expect(new Set(tables.map((t) => t.name)).size).toBe(tables.length);
    expect(new Set(buckets.map((b) => b.name)).size).toBe(buckets.length);
    expect(new Set(areas.map((a) => a.name)).size).toBe(areas.length);
    for (const area of areas) {
      expect(existsSync(`functions/${area.name}/${area.name}.module.ts`)).toBe(true);
      for (const r of area.routes) {
        expect(r.area).toBe(area.name);
        expect(existsSync(handlerModulePath(r))).toBe(true);
      }
    }
  });

  it('grants a function the kernel only when a route authenticates or is rate limited, plus its declared ports', () => {
    // Prepare
    const publicOnly = defineArea({ name: 'open', routes: [{ method: 'GET', path: '/open', handler: 'open', auth: 'public', callers: 'role' }] });
    const running = defineArea({
      name: 'runs',
      routes: [{ method: 'POST', path: '/run', handler: 'run', auth: 'required' }],
      uses: ['compute', 'keysReader', 'conversations'],
    });

    // Act
    const open = resourcesOf([publicOnly]);
    const runs = resourcesOf([running]);

    // Assess
    expect([...open.tables]).toEqual([]);
    expect(open.runTokenSecret).toBe(false);
    expect([...runs.tables].sort()).toEqual(['conversations', 'credit-ledger', 'keys', 'rate-limits', 'token-digests', 'tokens', 'users']);
    expect([...runs.buckets]).toEqual(['blobs']);
    expect([...runs.runtimes]).toEqual(['python']);
    expect(runs.secretsKey).toBe('open');
    expect(runs.runTokenSecret).toBe(true);
    expect(runs.oauthClients).toBe(false);
    expect([...runs.queueAreas]).toEqual([]);
    expect([...resourcesOf([defineArea({ name: 'sends', uses: ['tasks'] })]).queueAreas]).toEqual(['sends']);
  });

  it('passes the module check: every used port provided once, every named table and bucket owned', () => {
    // Act / Assess
    expect(() => checkAreas(areas)).not.toThrow();
  });

  it('names each module to fix when a port is missing, provided twice, a kernel name, or over a table no one owns', () => {
    // Prepare
    const notes = providePort({ tables: ['notes'] }, () => ({}));
    const broken = [
      ...areas,
      defineArea({ name: 'typo', uses: ['agent'] }),
      defineArea({ name: 'twice', provides: { agents: providePort({ tables: ['agents'] }, () => ({})) } }),
      defineArea({ name: 'shadow', provides: { clock: providePort({}, () => ({})) } }),
      defineArea({ name: 'orphan', provides: { notes } }),
    ];

    // Act
    const check = () => checkAreas(broken);

    // Assess
    expect(check).toThrow('typo uses the agent port, which neither the kernel nor any area provides');
    expect(check).toThrow('twice and agents both provide the agents port');
    expect(check).toThrow('shadow provides clock, a kernel port');
    expect(check).toThrow("orphan's notes port names the table notes, which no area owns");
  });

  it('grants the resources of the ports an area provides, and of those it uses from other areas', () => {
    // Prepare
    const notesArea = defineArea({
      name: 'notes',
      tables: [{ name: 'notes', partitionKey: 'userId' }],
      provides: { notes: providePort({ tables: ['notes'] }, () => ({})) },
    });
    const reader = defineArea({ name: 'reader', uses: ['notes', 'agents'] });

    // Act
    const owner = resourcesOf([notesArea], []);
    const user = resourcesOf([reader], [], [...areas, notesArea]);

    // Assess
    expect([...owner.tables]).toEqual(['notes']);
    expect([...user.tables].sort()).toEqual(['agent-counts', 'agent-names', 'agents', 'notes']);
  });

  it("parses each module's settings with the kernel's, and names every bad one", () => {
    // Prepare
    const reports = defineArea({ name: 'reports', settings: { REPORTS_PER_DAY: z.coerce.number().int().min(1).default(5) } });
    const base = { TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' };

    // Act
    const defaults = parseConfig(base, [...areas, reports]);
    const set = parseConfig({ ...base, REPORTS_PER_DAY: '9' }, [...areas, reports]);
    const bad = () => parseConfig({ ...base, REPORTS_PER_DAY: '0', CHAT_BILLING_TICK_SEC: 'soon' }, [...areas, reports]);

    // Assess
    expect((defaults as unknown as { REPORTS_PER_DAY: number }).REPORTS_PER_DAY).toBe(5);
    expect(defaults.CHAT_BILLING_TICK_SEC).toBe(10);
    expect((set as unknown as { REPORTS_PER_DAY: number }).REPORTS_PER_DAY).toBe(9);
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/REPORTS_PER_DAY: .*CHAT_BILLING_TICK_SEC: |CHAT_BILLING_TICK_SEC: .*REPORTS_PER_DAY: /);
  });

  it('refuses a setting declared twice, one shadowing the kernel, or one other functions could not start without', () => {
    // Prepare
    const broken = [
      ...areas,
      defineArea({ name: 'again', settings: { CHAT_BILLING_TICK_SEC: z.coerce.number().default(1) } }),
      defineArea({ name: 'shadow', settings: { STAGE: z.string().default('x') } }),
      defineArea({ name: 'needy', settings: { NEEDY_TOKEN: z.string() } }),
    ];

    // Act
    const check = () => checkAreas(broken);

    // Assess
    expect(check).toThrow('again and agents both declare the setting CHAT_BILLING_TICK_SEC');
    expect(check).toThrow('shadow declares the setting STAGE, a kernel setting');
    expect(check).toThrow("needy's settings NEEDY_TOKEN need a default or .optional()");
  });
});
