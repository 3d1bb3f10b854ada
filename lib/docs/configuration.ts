/**
 * The configuration reference's tables (docs/configuration.md), written from the settings' schemas:
 * the local platform's (lib/local/main.ts), the kernel's (functions/core/config.ts) and every listed
 * area's `settings`, each setting with the description and metadata its schema carries
 * (functions/core/setting-meta.ts). `npm run docs:config` rewrites the tables between their markers
 * and a unit test fails while they differ, so the reference lists every variable the platform reads.
 * The prose around the tables stays hand-written.
 */
import * as z from 'zod';
import { kernelSchema } from '../../functions/core/config.ts';
import type { Setter } from '../../functions/core/setting-meta.ts';
import { localSettings } from '../local/main.ts';
import { areas } from '../manifest/areas.ts';

export interface Setting {
  readonly name: string;
  /** The schema that declares it: `local platform`, `kernel`, or an area's name. */
  readonly declaredIn: string;
  readonly description: string | undefined;
  /** The schema's default as shown in the reference (`whenUnset` when it has none), or '' for none. */
  readonly defaultText: string;
  /** Whether the schema itself has a default, which `whenUnset` must not contradict. */
  readonly hasSchemaDefault: boolean;
  readonly whenUnset: string | undefined;
  readonly setBy: Setter | undefined;
  readonly deployOption: string | undefined;
}

/** The settings of one schema's shape, in declaration order. */
export function settingsOf(shape: z.ZodRawShape, declaredIn: string): Setting[] {
  return Object.entries(shape).map(([name, schema]) => {
    const meta = z.globalRegistry.get(schema);
    const def = schema._zod.def;
    const hasSchemaDefault = def.type === 'default';
    const schemaDefault = hasSchemaDefault ? (def as z.core.$ZodDefaultDef).defaultValue : undefined;
    return {
      name,
      declaredIn,
      description: meta?.description,
      defaultText: hasSchemaDefault ? `\`${Array.isArray(schemaDefault) ? schemaDefault.join(',') : String(schemaDefault)}\`` : (meta?.whenUnset ?? ''),
      hasSchemaDefault,
      whenUnset: meta?.whenUnset,
      setBy: meta?.setBy,
      deployOption: meta?.deployOption,
    };
  });
}

/**
 * Every setting the platform reads, in the order the reference lists them: `npm start`'s own, the
 * kernel's, then each area's in the area list's order. A name declared twice (LOG_LEVEL, by the
 * local platform and the kernel) appears twice.
 */
export function allSettings(): Setting[] {
  return [
    ...settingsOf(localSettings.shape, 'local platform'),
    ...settingsOf(kernelSchema.shape, 'kernel'),
    ...areas.flatMap((area) => settingsOf(area.settings, area.name)),
  ];
}

/** The tables of docs/configuration.md, each between `<!-- config:NAME:start -->` and `<!-- config:NAME:end -->`. */
export const CONFIG_TABLES = ['local', 'cloud', 'wiring'] as const;
export type ConfigTable = (typeof CONFIG_TABLES)[number];

const SETTER_TEXT: Record<Setter, string> = { local: 'local platform', stack: 'stack', wiring: 'local platform and stack' };

interface Column {
  readonly title: string;
  readonly cell: (setting: Setting) => string;
}

const name: Column = { title: 'Variable', cell: (s) => `\`${s.name}\`` };
const meaning: Column = { title: 'Meaning', cell: (s) => s.description ?? '' };

/** Which settings each table lists and what it shows of them. */
const TABLES: Record<ConfigTable, { readonly rows: (setting: Setting) => boolean; readonly columns: readonly Column[] }> = {
  // What an operator sets in `npm start`'s environment.
  local: { rows: (s) => s.setBy === undefined, columns: [name, { title: 'Default', cell: (s) => s.defaultText }, meaning] },
  // In the cloud the stack sets every variable; an operator chooses these through a deploy option.
  cloud: { rows: (s) => s.deployOption !== undefined, columns: [name, { title: 'Deploy option', cell: (s) => `\`${s.deployOption}\`` }, meaning] },
  // For reference: what the platform sets itself.
  wiring: {
    rows: (s) => s.setBy !== undefined,
    columns: [name, { title: 'Set by', cell: (s) => (s.setBy === undefined ? '' : SETTER_TEXT[s.setBy]) }, meaning],
  },
};

const escapeCell = (text: string) => text.replaceAll('|', '\\|');

/**
 * One table as Markdown. A name is listed once (its first declaration); settings whose cells but
 * the name are the same share a row (OAuth providers A, B and C; the host URLs), at the first's place.
 */
export function configurationTable(table: ConfigTable, settings: readonly Setting[] = allSettings()): string {
  const { rows, columns } = TABLES[table];
  const seen = new Set<string>();
  const merged = new Map<string, { names: string[]; cells: string[] }>();
  for (const setting of settings) {
    if (seen.has(setting.name)) continue;
    seen.add(setting.name);
    if (!rows(setting)) continue;
    const cells = columns.slice(1).map((column) => escapeCell(column.cell(setting)));
    const key = JSON.stringify(cells);
    const row = merged.get(key);
    if (row) row.names.push(columns[0]!.cell(setting));
    else merged.set(key, { names: [columns[0]!.cell(setting)], cells });
  }
  return [
    `| ${columns.map((c) => c.title).join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...[...merged.values()].map(({ names, cells }) => `| ${[names.join(', '), ...cells].join(' | ')} |`),
  ].join('\n');
}

export const markers = (table: ConfigTable) => ({ start: `<!-- config:${table}:start -->`, end: `<!-- config:${table}:end -->` });

/** `markdown` with each table between its markers replaced by `tables`' one; refuses a document without a table's markers. */
export function withConfigurationTables(markdown: string, tables: Readonly<Record<ConfigTable, string>>): string {
  let result = markdown;
  for (const table of CONFIG_TABLES) {
    const { start, end } = markers(table);
    const from = result.indexOf(start);
    const to = result.indexOf(end, from);
    if (from < 0 || to < 0) throw new Error(`docs/configuration.md has no ${start} ... ${end} markers for the ${table} table`);
    result = `${result.slice(0, from + start.length)}\n${tables[table]}\n${result.slice(to)}`;
  }
  return result;
}

/** Every table, from the schemas as they are. */
export function configurationTables(settings: readonly Setting[] = allSettings()): Record<ConfigTable, string> {
  return Object.fromEntries(CONFIG_TABLES.map((table) => [table, configurationTable(table, settings)])) as Record<ConfigTable, string>;
}
