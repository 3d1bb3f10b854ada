import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { expectArgs, type Context } from '../args.ts';
import { CliError, UsageError } from '../errors.ts';
import { callPlatform, listAll, type Connection } from '../http.ts';
import { bold, isoTime, plural, printJson, printTable } from '../output.ts';

/** Agents, actions and MCP servers: deploy from a file, list. */

export type Kind = 'agents' | 'actions' | 'mcp';

/** A listed resource as the list endpoints answer it (the fields the CLI reads). */
export interface Resource {
  readonly [field: string]: unknown;
}

interface KindApi {
  readonly label: string;
  readonly extensions: readonly string[];
  readonly listPath: string;
  readonly listKey: string;
  readonly idField: string;
  readonly nameField: string;
  readonly createPath: string;
  readonly updatePath: string;
  /** Agents are deleted softly and keep their name: a deploy of that name restores the deleted one. */
  readonly restorable: boolean;
  /** The fields a create needs besides name, description, source and visibility. */
  readonly createExtras: (context: Context) => Record<string, unknown>;
  /** Fields of its own kind an update changes when they are given. */
  readonly updateExtras: (context: Context) => Record<string, unknown>;
  readonly columns: readonly (readonly [string, (resource: Resource) => string])[];
}

const text = (value: unknown): string => (value === undefined || value === null ? '-' : String(value));
const time = (value: unknown): string => (typeof value === 'number' ? isoTime(value) : '-');

const KINDS: Readonly<Record<Kind, KindApi>> = {
  agents: {
    label: 'agent',
    extensions: ['.py'],
    listPath: '/agent/list',
    listKey: 'agents',
    idField: 'agentId',
    nameField: 'agentName',
    createPath: '/agent/create',
    updatePath: '/agent/update',
    restorable: true,
    createExtras: () => ({}),
    updateExtras: () => ({}),
    columns: [
      ['NAME', (r) => text(r['agentName'])],
      ['ID', (r) => text(r['agentId'])],
      ['VISIBILITY', (r) => text(r['visibility'])],
      ['UPDATED', (r) => time(r['updatedAt'])],
    ],
  },
  actions: {
    label: 'action',
    extensions: ['.py'],
    listPath: '/action/list',
    listKey: 'actions',
    idField: 'actionId',
    nameField: 'actionName',
    createPath: '/action/create',
    updatePath: '/action/update',
    restorable: false,
    createExtras: (context) => ({ runtime: 'python3.12', category: context.values.category ?? 'general' }),
    updateExtras: (context) => (context.values.category === undefined ? {} : { category: context.values.category }),
    columns: [
      ['NAME', (r) => text(r['actionName'])],
      ['ID', (r) => text(r['actionId'])],
      ['STATUS', (r) => text(r['status'])],
      ['VISIBILITY', (r) => text(r['visibility'])],
      ['UPDATED', (r) => time(r['updatedAt'])],
    ],
  },
  mcp: {
    label: 'MCP server',
    extensions: ['.js', '.mjs', '.cjs'],
    listPath: '/mcp-admin/list',
    listKey: 'servers',
    idField: 'serverId',
    nameField: 'serverName',
    createPath: '/mcp-admin/create',
    updatePath: '/mcp-admin/update',
    restorable: false,
    createExtras: () => ({}),
    updateExtras: () => ({}),
    columns: [
      ['NAME', (r) => text(r['serverName'])],
      ['ID', (r) => text(r['serverId'])],
      ['VERSION', (r) => text(r['latestVersion'])],
      ['TOOLS', (r) => (Array.isArray(r['tools']) ? r['tools'].join(',') || '-' : '-')],
      ['VISIBILITY', (r) => text(r['visibility'])],
      ['UPDATED', (r) => time(r['updatedAt'])],
    ],
  },
};

const ALL_KINDS: readonly Kind[] = ['agents', 'actions', 'mcp'];

/** The caller's own resources of a kind, every page (`visibility=all` lists only one's own when signed in). */
export function listOwn(connection: Connection, kind: Kind, query: Record<string, string> = {}): Promise<Resource[]> {
  const api = KINDS[kind];
  return listAll<Resource>(connection, api.listPath, api.listKey, { visibility: 'all', ...query });
}

/** The caller's resource of that exact name, if any; more than one (actions' names are not unique) is an error. */
export async function findOwnByName(connection: Connection, kind: Kind, name: string, query: Record<string, string> = {}): Promise<Resource | undefined> {
  const api = KINDS[kind];
  // Actions can be filtered by name on the server; agent and MCP server names are unique per owner anyway.
  const candidates = await listOwn(connection, kind, kind === 'actions' ? { ...query, nameContains: name } : query);
  const matches = candidates.filter((resource) => resource[api.nameField] === name);
  if (matches.length > 1) {
    throw new CliError(`${matches.length} of your ${kind} are named "${name}" (${matches.map((m) => text(m[api.idField])).join(', ')}): rename all but one.`);
  }
  return matches[0];
}

/**
 * `<kind> deploy <file>`: creates the resource from the file, or updates the caller's resource of
 * the same name (its source, and the description or visibility when given), so deploying twice
 * never makes a duplicate. An MCP server's update writes its next version; a deleted agent of that
 * name (which keeps its name) is restored.
 */
export async function deploy(kind: Kind, context: Context): Promise<number> {
  const api = KINDS[kind];
  const [file] = expectArgs(context, 1, 1, `${kind} deploy needs a source file (${api.extensions.join(', ')}).`);
  const extension = extname(file!);
  if (!api.extensions.includes(extension)) throw new UsageError(`${kind} deploy takes a ${api.extensions.join(' or ')} file, not "${file}".`);
  const name = context.values.name ?? basename(file!, extension);
  const sourceCode = await readFile(file!, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });

  const connection = await context.connect();
  const active = await findOwnByName(connection, kind, name);
  const deleted = active === undefined && api.restorable ? await findOwnByName(connection, kind, name, { status: 'deleted' }) : undefined;
  const existing = active ?? deleted;
  const restore = deleted === undefined ? {} : { status: 'active' };
  const visibility = context.values.public === true ? { visibility: 'public' } : {};
  const description = context.values.description === undefined ? {} : { description: context.values.description };
  let id: string;
  let data: Resource;
  if (existing === undefined) {
    data = await callPlatform<Resource>(connection, 'POST', api.createPath, {
      body: {
        [api.nameField]: name,
        description: context.values.description ?? `${name} (deployed from ${basename(file!)})`,
        sourceCode,
        ...visibility,
        ...api.createExtras(context),
      },
    });
    id = text(data[api.idField]);
  } else {
    id = text(existing[api.idField]);
    data = await callPlatform<Resource>(connection, 'PUT', api.updatePath, {
      body: { [api.idField]: id, sourceCode, ...description, ...visibility, ...api.updateExtras(context), ...restore },
    });
  }
  const result = existing === undefined ? 'created' : deleted === undefined ? 'updated' : 'restored';
  if (context.output.json) {
    // An action's update answers the action under `action`; the other kinds answer the resource itself.
    printJson({ result, kind, id, name, ...withoutSource((data['action'] as Resource | undefined) ?? {}), ...withoutSource(data) });
    return 0;
  }
  const version = typeof data['version'] === 'number' ? `, version ${data['version']}` : '';
  const verb = { created: 'Created', updated: 'Updated', restored: 'Restored (it had been deleted) and updated' }[result];
  console.log(`${verb} ${api.label} ${name} (${id}${version}).`);
  const endpoint = data['endpointUrl'] ?? (data['action'] as Resource | undefined)?.['oneClickUrl'];
  if (typeof endpoint === 'string') console.log(`  ${endpoint}`);
  return 0;
}

function withoutSource(data: Resource): Resource {
  const { sourceCode: _source, action: _action, message: _message, ...rest } = data;
  return rest;
}

/** `ls [agents|actions|mcp]`: one table per kind (all three by default), or JSON. */
export async function list(context: Context): Promise<number> {
  const [only] = expectArgs(context, 0, 1, '');
  if (only !== undefined && !(ALL_KINDS as readonly string[]).includes(only)) throw new UsageError(`ls lists agents, actions or mcp, not "${only}".`);
  const kinds = only === undefined ? ALL_KINDS : [only as Kind];
  const connection = await context.connect();
  const listed = await Promise.all(kinds.map(async (kind) => [kind, (await listOwn(connection, kind)).map(withoutSource)] as const));
  if (context.output.json) {
    printJson(only === undefined ? Object.fromEntries(listed) : listed[0]![1]);
    return 0;
  }
  listed.forEach(([kind, resources], index) => {
    const api = KINDS[kind];
    if (index > 0) console.log('');
    if (only === undefined) console.log(bold(`${kind === 'mcp' ? 'MCP servers' : kind[0]!.toUpperCase() + kind.slice(1)} (${resources.length})`));
    if (resources.length === 0) {
      console.log(`No ${api.label}s yet.`);
      return;
    }
    printTable(
      api.columns.map(([title]) => title),
      resources.map((resource) => api.columns.map(([, cell]) => cell(resource))),
    );
    if (only !== undefined) console.log(plural(resources.length, api.label));
  });
  return 0;
}
