/**
 * docs/configuration.md's tables are what `npm run docs:config` writes from the settings' schemas
 * (lib/docs/configuration.ts), so the reference cannot miss a variable the platform reads, nor
 * describe one that is gone or show a default the schema no longer has.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { KERNEL_SETTINGS } from '../../functions/core/config.ts';
import { SETTERS } from '../../functions/core/setting-meta.ts';
import {
  CONFIG_TABLES,
  allSettings,
  configurationTable,
  configurationTables,
  markers,
  settingsOf,
  withConfigurationTables,
} from '../../lib/docs/configuration.ts';
import { localSettings } from '../../lib/local/main.ts';
import { areas } from '../../lib/manifest/areas.ts';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The Markdown between a table's markers. */
const section = (markdown: string, table: (typeof CONFIG_TABLES)[number]) => {
  const { start, end } = markers(table);
  return markdown.slice(markdown.indexOf(start), markdown.indexOf(end));
};

describe('the configuration reference', () => {
  it("matches the settings' schemas (npm run docs:config rewrites it)", async () => {
    // Prepare
    const doc = await read('docs/configuration.md');
    // Act
    const updated = withConfigurationTables(doc, configurationTables());
    // Assess: table by table, so a failure shows the rows that differ
    for (const table of CONFIG_TABLES) {
      expect(section(doc, table), `docs/configuration.md ${table} table is stale: run npm run docs:config`).toBe(section(updated, table));
    }
    expect(doc).toBe(updated);
  });

  it('names every setting of the local platform, the kernel and every listed area', async () => {
    // Prepare
    const doc = await read('docs/configuration.md');
    const declared = [...Object.keys(localSettings.shape), ...KERNEL_SETTINGS, ...areas.flatMap((area) => Object.keys(area.settings))];
    // Act
    const missing = declared.filter((name) => !CONFIG_TABLES.some((table) => section(doc, table).includes(`\`${name}\``)));
    // Assess
    expect(declared.length).toBeGreaterThan(KERNEL_SETTINGS.size);
    expect(missing, 'settings missing from docs/configuration.md: run npm run docs:config').toEqual([]);
  });

  it('has a one-line description for every setting', () => {
    // Act
    const settings = allSettings();
    const undescribed = settings.filter((s) => (s.description ?? '').trim() === '').map((s) => `${s.declaredIn}: ${s.name}`);
    const multiline = settings.filter((s) => s.description?.includes('\n')).map((s) => `${s.declaredIn}: ${s.name}`);
    // Assess
    expect(undescribed, 'add .describe(...) or .meta({ description }) to these settings').toEqual([]);
    expect(multiline, 'a description is one table cell: no line breaks').toEqual([]);
  });

  it('keeps its metadata consistent: no text default beside a schema default, one default per name, known setters', () => {
    // Act
    const settings = allSettings();
    const defaults = new Map<string, Set<string>>();
    for (const s of settings) defaults.set(s.name, (defaults.get(s.name) ?? new Set()).add(s.defaultText));
    // Assess
    expect(settings.filter((s) => s.hasSchemaDefault && s.whenUnset !== undefined).map((s) => s.name)).toEqual([]);
    expect([...defaults].filter(([, shown]) => shown.size > 1).map(([name]) => name)).toEqual([]);
    expect(settings.filter((s) => s.setBy !== undefined && !SETTERS.includes(s.setBy)).map((s) => s.name)).toEqual([]);
  });

  it('shows the schema default, else the documented one, and shares a row between settings that differ only by name', () => {
    // Prepare
    const settings = settingsOf(
      {
        ONE_A: z.string().optional().describe('One of two'),
        ONE_B: z.string().optional().describe('One of two'),
        COUNT: z.coerce.number().default(3).describe('How many'),
        HOSTS: z
          .string()
          .transform((text) => text.split(','))
          .default(['a', 'b'])
          .describe('Which hosts'),
        PORT: z.coerce.number().optional().meta({ description: 'Where', whenUnset: '`PORT + 1`' }),
        PREFIX: z.string().meta({ description: 'Names', setBy: 'stack' }),
      },
      'test',
    );
    // Act
    const local = configurationTable('local', settings);
    const wiring = configurationTable('wiring', settings);
    // Assess
    expect(local.split('\n')).toEqual([
      '| Variable | Default | Meaning |',
      '|---|---|---|',
      '| `ONE_A`, `ONE_B` |  | One of two |',
      '| `COUNT` | `3` | How many |',
      '| `HOSTS` | `a,b` | Which hosts |',
      '| `PORT` | `PORT + 1` | Where |',
    ]);
    expect(wiring.split('\n').slice(2)).toEqual(['| `PREFIX` | stack | Names |']);
  });

  it('replaces only what is between the markers and refuses a document without them', () => {
    // Prepare
    const tables = { local: '| L |', cloud: '| C |', wiring: '| W |' };
    const doc = CONFIG_TABLES.map((table) => `Prose ${table}.\n\n${markers(table).start}\n| old |\n${markers(table).end}\n`).join('\n');
    // Act
    const updated = withConfigurationTables(doc, tables);
    // Assess
    expect(updated).toBe(CONFIG_TABLES.map((table) => `Prose ${table}.\n\n${markers(table).start}\n${tables[table]}\n${markers(table).end}\n`).join('\n'));
    expect(() => withConfigurationTables('# no markers\n', tables)).toThrow(/config:local:start/);
  });
});
