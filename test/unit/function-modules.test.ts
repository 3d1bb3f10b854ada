/**
 * The area modules a cloud function is built from (`modulesOfFunction`): each generated entry
 * imports these instead of the whole list, so its bundle holds no other area's stores. They must
 * still give every area every port it declares, and be importable where the entries look.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../functions/core/config.ts';
import { createPorts, portsForArea, type PortAdapters } from '../../functions/ports.ts';
import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import { areaModuleImport, areas, modulesOfFunction, resourcesOf } from '../../lib/manifest/index.ts';
import { cloudAdapterPortsOf } from '../../lib/manifest/port-resources.ts';

describe('modulesOfFunction', () => {
  it.each(areas.map((area) => [area.name, area] as const))('%s: builds every port the area declares, from its own list', (_name, area) => {
    // Prepare
    const modules = modulesOfFunction([area]);
    const config = parseConfig(
      { TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-', DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', S3_ENDPOINT: 'http://127.0.0.1:1' },
      modules,
    );

    // Act
    const view = portsForArea(createPorts(config, {} as PortAdapters, modules), area);

    // Assess: the area first; the others only because they provide a port it uses.
    expect(modules[0]).toBe(area);
    for (const other of modules.slice(1))
      expect(
        area.uses.some((port) => Object.hasOwn(other.provides, port)),
        other.name,
      ).toBe(true);
    for (const port of [...area.uses, ...Object.keys(area.provides)]) expect(() => Reflect.get(view, port), port).not.toThrow();
  });

  it('adds the provider of a used port, once, and refuses a port nobody provides', () => {
    // Prepare
    const provider = defineArea({ name: 'store-owner', provides: { things: providePort({}, () => ({})), others: providePort({}, () => ({})) } });
    const user = defineArea({ name: 'thing-user', uses: ['things', 'others', 'users'] });
    const lost = defineArea({ name: 'lost', uses: ['nothing'] });

    // Act
    const modules = modulesOfFunction([user], [provider, user]);

    // Assess
    expect(modules.map((m) => m.name)).toEqual(['thing-user', 'store-owner']);
    expect(() => modulesOfFunction([lost], [provider, lost])).toThrow(/nothing port lost uses/);
  });

  it('leaves a port the platform was not built with unreadable, naming it', () => {
    // Prepare: a function whose list lacks the provider (a bug modulesOfFunction prevents).
    const provider = defineArea({ name: 'store-owner', provides: { things: providePort({}, () => ({ ok: true })) } });
    const user = defineArea({ name: 'thing-user', uses: ['things'] });
    const config = parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' }, [user]);

    // Act
    const view = portsForArea(createPorts(config, {} as PortAdapters, [user]), user);
    const complete = portsForArea(createPorts(config, {} as PortAdapters, [user, provider]), user);

    // Assess
    expect(() => Reflect.get(view, 'things')).toThrow(/thing-user area uses the things port, which no area module of this platform provides/);
    expect(Reflect.get(complete, 'things')).toEqual({ ok: true });
  });
});

describe('cloudAdapterPortsOf', () => {
  it.each(areas.map((area) => [area.name, area] as const))('%s: the adapters its entry wires are those of the resources it is granted', (_name, area) => {
    // Act
    const wired = [...cloudAdapterPortsOf([area], areas).keys()].sort();
    const granted = resourcesOf([area]);

    // Assess: what the entry imports (lib/cloud/function-entries.ts) follows the grants (lib/cloud/area-functions.ts).
    expect(wired).toEqual(
      [
        ...(granted.runtimes.has('python') ? ['compute'] : []),
        ...(granted.runtimes.has('mcp') ? ['mcpRuntime'] : []),
        ...(granted.secretsKey !== null ? ['secretBox'] : []),
        ...(granted.queueAreas.size > 0 ? ['taskQueue'] : []),
        ...(granted.buckets.has('blobs') ? ['blobs'] : []),
        ...(granted.scheduleAreas.size > 0 ? ['schedules'] : []),
        ...(granted.agentRuns ? ['agentRuns'] : []),
      ].sort(),
    );
  });

  it('follows a used port to the resources its provider declares, and names the area that needs each adapter', () => {
    // Prepare: a provided port that opens sealed secrets, as the keys area's keysReader does.
    const provider = defineArea({ name: 'vault', provides: { opener: providePort({ secretsKey: 'open' }, () => ({})) } });
    const runner = defineArea({ name: 'runner', uses: ['compute'] });
    const reader = defineArea({ name: 'reader', uses: ['opener', 'tasks'] });

    // Act
    const ports = cloudAdapterPortsOf([runner, reader], [provider, runner, reader]);

    // Assess
    expect([...ports]).toEqual([
      ['compute', 'runner'],
      ['secretBox', 'reader'],
      ['taskQueue', 'reader'],
    ]);
    expect([...cloudAdapterPortsOf([provider], [provider]).keys()]).toEqual(['secretBox']);
  });
});

describe('areaModuleImport', () => {
  it.each(areas.map((area) => [area.name, area] as const))('%s: the generated entries find the module where they import it from', async (_name, area) => {
    // Prepare
    const { path, exportName } = areaModuleImport(area);

    // Act
    const exported = ((await import(join(REPO_ROOT, path))) as Record<string, unknown>)[exportName];

    // Assess
    expect(existsSync(join(REPO_ROOT, path)), path).toBe(true);
    expect(exported, `${path} exports ${exportName}`).toBe(area);
  });

  it('names the file after the area and the export in camel case', () => {
    expect(areaModuleImport({ name: 'users' })).toEqual({ path: 'functions/users/users.module.ts', exportName: 'usersArea' });
    expect(areaModuleImport({ name: 'code-server', folder: 'test/fixtures/x' })).toEqual({
      path: 'test/fixtures/x/code-server.module.ts',
      exportName: 'codeServerArea',
    });
  });
});
