import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { expectArgs, type Context } from '../args.ts';
import { CliError, UsageError } from '../errors.ts';
import type { PlatformClient } from '../../../clients/typescript/src/index.ts';
import { dataOrFail, listAll, type Connection, type Page } from '../http.ts';
import { bold, isoTime, plural, printJson, printTable } from '../output.ts';

/** Agents, actions and MCP servers: deploy from a file, list. */

export type Kind = 'agents' | 'actions' | 'mcp';

/** One of the caller's resources as the CLI shows it, whatever its kind. */
export interface Listed {
  readonly id: string;
  readonly name: string;
  /** Its row of `ls`, under the kind's titles. */
  readonly cells: readonly string[];
  /** What `--json` prints: the resource as listed, without its source. */
  readonly record: object;
}

/** Which of the caller's resources a listing needs; a kind applies what its listing can filter by. */
interface Filter {
  /** The caller compares names exactly anyway: only actions' listing narrows by name on the server. */
  readonly name?: string;
  /** Deleted agents (only agents are deleted softly). */
  readonly deleted?: boolean;
}

/** What a deploy sends besides the resource's name or id; undefined fields are left out. */
interface Deployment {
  readonly sourceCode: string;
  readonly description: string | undefined;
  readonly visibility: 'public' | undefined;
  readonly category: string | undefined;
}

/** What a deploy answered, as the CLI prints it. */
interface Deployed {
  readonly id: string;
  /** What `--json` prints after result, kind, id and name. */
  readonly record: object;
  /** An MCP server's version the deploy wrote. */
  readonly version?: number | null;
  readonly endpoint?: string;
}

interface KindApi {
  readonly label: string;
  readonly extensions: readonly string[];
  /** Agents are deleted softly and keep their name: a deploy of that name restores the deleted one. */
  readonly restorable: boolean;
  /** The titles of the `cells` of its listed resources. */
  readonly titles: readonly string[];
  /** One page of the caller's own (`visibility=all` lists only one's own when signed in). */
  readonly list: (api: PlatformClient, page: { limit: number; cursor?: string }, filter: Filter) => Promise<Page<Listed>>;
  readonly create: (api: PlatformClient, name: string, deployment: Deployment & { readonly description: string }) => Promise<Deployed>;
  /** `restore` makes a deleted one (of a restorable kind) active again. */
  readonly update: (api: PlatformClient, id: string, deployment: Deployment & { readonly restore: boolean }) => Promise<Deployed>;
}

const KINDS: Readonly<Record<Kind, KindApi>> = {
  agents: {
    label: 'agent',
    extensions: ['.py'],
    restorable: true,
    titles: ['NAME', 'ID', 'VISIBILITY', 'UPDATED'],
    list: async (api, page, filter) => {
      const { agents, nextCursor } = await dataOrFail(
        api.GET('/agent/list', { params: { query: { visibility: 'all', ...page, status: filter.deleted === true ? 'deleted' : undefined } } }),
      );
      return {
        items: agents.map((agent) =>
          listed(agent, agent.agentId, agent.agentName, [agent.agentName, agent.agentId, agent.visibility, isoTime(agent.updatedAt)]),
        ),
        nextCursor,
      };
    },
    create: async (api, name, { sourceCode, description, visibility }) =>
      deployedAgent(await dataOrFail(api.POST('/agent/create', { body: { agentName: name, description, sourceCode, visibility } }))),
    update: async (api, agentId, { sourceCode, description, visibility, restore }) =>
      deployedAgent(
        await dataOrFail(api.PUT('/agent/update', { body: { agentId, sourceCode, description, visibility, status: restore ? 'active' : undefined } })),
      ),
  },
  actions: {
    label: 'action',
    extensions: ['.py'],
    restorable: false,
    titles: ['NAME', 'ID', 'STATUS', 'VISIBILITY', 'UPDATED'],
    list: async (api, page, filter) => {
      const { actions, nextCursor } = await dataOrFail(
        api.GET('/action/list', { params: { query: { visibility: 'all', ...page, nameContains: filter.name } } }),
      );
      return {
        items: actions.map((action) =>
          listed(action, action.actionId, action.actionName, [action.actionName, action.actionId, action.status, action.visibility, isoTime(action.updatedAt)]),
        ),
        nextCursor,
      };
    },
    create: async (api, name, { sourceCode, description, visibility, category }) => {
      const { actionId } = await dataOrFail(
        api.POST('/action/create', {
          body: { actionName: name, description, sourceCode, visibility, runtime: 'python3.12', category: category ?? 'general' },
        }),
      );
      return { id: actionId, record: { actionId } };
    },
    update: async (api, actionId, { sourceCode, description, visibility, category }) => {
      // An action's update answers the action under `action`.
      const { action } = await dataOrFail(api.PUT('/action/update', { body: { actionId, sourceCode, description, visibility, category } }));
      return { id: action.actionId, record: { ...withoutSource(action), actionId }, endpoint: action.oneClickUrl };
    },
  },
  mcp: {
    label: 'MCP server',
    extensions: ['.js', '.mjs', '.cjs'],
    restorable: false,
    titles: ['NAME', 'ID', 'VERSION', 'TOOLS', 'VISIBILITY', 'UPDATED'],
    list: async (api, page) => {
      const { servers, nextCursor } = await dataOrFail(api.GET('/mcp-admin/list', { params: { query: { visibility: 'all', ...page } } }));
      return {
        items: servers.map((server) =>
          listed(server, server.serverId, server.serverName, [
            server.serverName,
            server.serverId,
            String(server.latestVersion),
            server.tools.join(',') || '-',
            server.visibility,
            isoTime(server.updatedAt),
          ]),
        ),
        nextCursor,
      };
    },
    create: async (api, name, { sourceCode, description, visibility }) =>
      deployedServer(await dataOrFail(api.POST('/mcp-admin/create', { body: { serverName: name, description, sourceCode, visibility } }))),
    update: async (api, serverId, { sourceCode, description, visibility }) =>
      deployedServer(await dataOrFail(api.PUT('/mcp-admin/update', { body: { serverId, sourceCode, description, visibility } }))),
  },
};

const ALL_KINDS: readonly Kind[] = ['agents', 'actions', 'mcp'];

function listed<R extends { readonly sourceCode?: string }>(resource: R, id: string, name: string, cells: readonly string[]): Listed {
  return { id, name, cells, record: withoutSource(resource) };
}

function deployedAgent(agent: { readonly agentId: string; readonly endpointUrl: string; readonly sourceCode?: string }): Deployed {
  return { id: agent.agentId, record: withoutSource(agent), endpoint: agent.endpointUrl };
}

function deployedServer(server: {
  readonly serverId: string;
  readonly endpointUrl: string;
  readonly version: number | null;
  readonly sourceCode?: string;
}): Deployed {
  return { id: server.serverId, record: withoutSource(server), version: server.version, endpoint: server.endpointUrl };
}

/** The resource without its source, which is never printed. */
function withoutSource<R extends { readonly sourceCode?: string }>(resource: R): Omit<R, 'sourceCode'> {
  const { sourceCode: _source, ...rest } = resource;
  return rest;
}

/** The caller's own resources of a kind, every page. */
export function listOwn(connection: Connection, kind: Kind, filter: Filter = {}): Promise<Listed[]> {
  return listAll((page) => KINDS[kind].list(connection.api, page, filter));
}

/** The caller's resource of that exact name, if any; more than one (actions' names are not unique) is an error. */
export async function findOwnByName(connection: Connection, kind: Kind, name: string, filter: Omit<Filter, 'name'> = {}): Promise<Listed | undefined> {
  const candidates = await listOwn(connection, kind, { ...filter, name });
  const matches = candidates.filter((resource) => resource.name === name);
  if (matches.length > 1) {
    throw new CliError(`${matches.length} of your ${kind} are named "${name}" (${matches.map((m) => m.id).join(', ')}): rename all but one.`);
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
  const spec = KINDS[kind];
  const [file] = expectArgs(context, 1, 1, `${kind} deploy needs a source file (${spec.extensions.join(', ')}).`);
  const extension = extname(file!);
  if (!spec.extensions.includes(extension)) throw new UsageError(`${kind} deploy takes a ${spec.extensions.join(' or ')} file, not "${file}".`);
  const name = context.values.name ?? basename(file!, extension);
  const sourceCode = await readFile(file!, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });

  const connection = await context.connect();
  const active = await findOwnByName(connection, kind, name);
  const deleted = active === undefined && spec.restorable ? await findOwnByName(connection, kind, name, { deleted: true }) : undefined;
  const existing = active ?? deleted;
  const deployment: Deployment = {
    sourceCode,
    description: context.values.description,
    visibility: context.values.public === true ? 'public' : undefined,
    category: context.values.category,
  };
  const deployed =
    existing === undefined
      ? await spec.create(connection.api, name, { ...deployment, description: deployment.description ?? `${name} (deployed from ${basename(file!)})` })
      : await spec.update(connection.api, existing.id, { ...deployment, restore: deleted !== undefined });
  const result = existing === undefined ? 'created' : deleted === undefined ? 'updated' : 'restored';
  if (context.output.json) {
    printJson({ result, kind, id: deployed.id, name, ...deployed.record });
    return 0;
  }
  const version = typeof deployed.version === 'number' ? `, version ${deployed.version}` : '';
  const verb = { created: 'Created', updated: 'Updated', restored: 'Restored (it had been deleted) and updated' }[result];
  console.log(`${verb} ${spec.label} ${name} (${deployed.id}${version}).`);
  if (deployed.endpoint !== undefined) console.log(`  ${deployed.endpoint}`);
  return 0;
}

/** `ls [agents|actions|mcp]`: one table per kind (all three by default), or JSON. */
export async function list(context: Context): Promise<number> {
  const [only] = expectArgs(context, 0, 1, '');
  if (only !== undefined && !(ALL_KINDS as readonly string[]).includes(only)) throw new UsageError(`ls lists agents, actions or mcp, not "${only}".`);
  const kinds = only === undefined ? ALL_KINDS : [only as Kind];
  const connection = await context.connect();
  const owned = await Promise.all(kinds.map(async (kind) => [kind, await listOwn(connection, kind)] as const));
  if (context.output.json) {
    const records = owned.map(([kind, resources]) => [kind, resources.map((resource) => resource.record)] as const);
    printJson(only === undefined ? Object.fromEntries(records) : records[0]![1]);
    return 0;
  }
  owned.forEach(([kind, resources], index) => {
    const spec = KINDS[kind];
    if (index > 0) console.log('');
    if (only === undefined) console.log(bold(`${kind === 'mcp' ? 'MCP servers' : kind[0]!.toUpperCase() + kind.slice(1)} (${resources.length})`));
    if (resources.length === 0) {
      console.log(`No ${spec.label}s yet.`);
      return;
    }
    printTable(
      spec.titles,
      resources.map((resource) => resource.cells),
    );
    if (only !== undefined) console.log(plural(resources.length, spec.label));
  });
  return 0;
}
