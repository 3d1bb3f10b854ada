import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { actionIdSchema } from '../actions/action-fields.ts';
import { listActions } from '../actions/action.service.ts';
import { eventFromBody } from '../actions/execution.rules.ts';
import { runAction, type ExecutionPorts } from '../actions/execution.service.ts';
import { requireUser, type UserActor } from '../core/auth/actor.ts';
import { ValidationError } from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import type { Reply } from '../core/http/route.ts';
import type { HttpRequest } from '../core/http/request.ts';
import type { RequestScope } from '../core/request-scope.ts';
import { searchBody } from '../knowledge/knowledge.schema.ts';
import { searchFiles, type KnowledgePorts } from '../knowledge/knowledge.service.ts';
import { callMcpServer, type McpEndpointPorts } from '../mcp/endpoint.service.ts';
import type { McpServerRecord } from '../mcp/mcp.schema.ts';
import { PLATFORM_MCP_PATH } from './platform-mcp-url.ts';
import { getSkillBySlug, listSkills, type SkillPorts } from '../skills/skill.service.ts';

/** What the tools reach: each through the service its direct endpoint uses. */
export type PlatformToolsPorts = ExecutionPorts & McpEndpointPorts & SkillPorts & KnowledgePorts;

/** A tool as `tools/list` shows it (MCP's `Tool`). */
export interface ToolDescription {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** A `tools/call` result (MCP's `CallToolResult`). */
export interface ToolResult {
  readonly content: readonly { readonly type: string; readonly [key: string]: unknown }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly [key: string]: unknown;
}

/** A tool name the platform does not serve: the SDK answers it as JSON-RPC "invalid params", as MCP prescribes. */
export class UnknownToolError extends Error {}

/**
 * Hosted tools are named `{serverName}__{tool}`. Server names are lowercase letters, digits and
 * single hyphens, so the first `__` always ends the server's name.
 */
export const HOSTED_TOOL_SEPARATOR = '__';

/**
 * How many of the caller's hosted servers `tools/list` asks for their tools (newest first), unless
 * `?servers=` names them: each is one run of the server. A larger account names the servers an
 * agent needs.
 */
export const MAX_LISTED_SERVERS = 20;

/** The most actions or skills a listing tool shows. */
const MAX_LISTED = 100;

const ownOrPublic = z.enum(['mine', 'public']).default('mine').describe('"mine" (default): your own; "public": everyone\'s public ones you may use');

const BUILT_IN = {
  search_knowledge: {
    description:
      'Searches your knowledge files (the files uploaded to the platform) and returns the best matching passages: for each hit the file name, its key, the chunk of text and its score. Optionally only one folder or file type.',
    input: searchBody.extend({
      query: searchBody.shape.query.describe('What to look for, in words'),
      folder: searchBody.shape.folder.describe('Only files under this folder, e.g. "docs/policies"'),
    }),
  },
  list_actions: {
    description: 'Lists the actions (Python functions hosted on the platform) you may run with run_action: id, name, description and parameters.',
    input: z.object({ scope: ownOrPublic, nameContains: z.string().trim().min(1).max(100).optional().describe('Only actions whose name contains this') }),
  },
  run_action: {
    description:
      'Runs one of your actions (or a public one) with the given parameters, billed to you as a direct run, and returns what its handler returned (statusCode and body) and the credits used.',
    input: z.object({
      actionId: actionIdSchema.describe('The action id, "act-..." (see list_actions)'),
      parameters: z.record(z.string(), z.unknown()).default({}).describe("The action's parameters, by name"),
    }),
  },
  list_skills: {
    description: 'Lists skills (SKILL.md documents): owner, name and description; read one with get_skill.',
    input: z.object({ scope: ownOrPublic }),
  },
  get_skill: {
    description: 'Returns the SKILL.md text of one skill, named by its owner and name (your own when the owner is left out).',
    input: z.object({
      owner: z.string().trim().min(1).max(64).optional().describe("The owner's alias; yours when left out"),
      name: z.string().trim().min(1).max(128).describe("The skill's name"),
    }),
  },
} as const;

type BuiltInName = keyof typeof BUILT_IN;

function isBuiltIn(name: string): name is BuiltInName {
  return Object.hasOwn(BUILT_IN, name);
}

/**
 * The JSON Schema of a tool's arguments as clients send them (defaults may be left out). The
 * schema's own method rather than `z.toJSONSchema`, which is the same conversion but brings the
 * converters of every zod type into the function's bundle, used or not.
 */
function inputSchemaOf(schema: z.ZodType): ToolDescription['inputSchema'] {
  const { $schema: _ignored, ...json } = schema.toJSONSchema({ io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...json, type: 'object' };
}

const BUILT_IN_TOOLS: readonly ToolDescription[] = Object.entries(BUILT_IN).map(([name, tool]) => ({
  name,
  description: tool.description,
  inputSchema: inputSchemaOf(tool.input),
}));

/**
 * A scope for one call the platform makes for the request (an action run, a hosted server's
 * request): a request id of its own, since each writes its own usage record (keyed by request id),
 * and the request as its parent, so the trace shows it under the platform call, and the platform
 * call under the chat that made it.
 */
function childScope(scope: RequestScope): RequestScope {
  const { lineage } = scope;
  const requestId = randomUUID();
  return {
    ...scope,
    lineage: {
      requestId,
      rootRequestId: lineage.rootRequestId,
      parentRequestId: lineage.requestId,
      parentConversationId: lineage.parentConversationId,
      parentAgentId: lineage.parentAgentId,
    },
    log: scope.log.child({ requestId, parentRequestId: lineage.requestId }),
  };
}

/** A JSON-RPC request to a hosted server, as its endpoint receives it from a client. */
function hostedRequest(scope: RequestScope, message: Record<string, unknown>): HttpRequest {
  return {
    method: 'POST',
    path: PLATFORM_MCP_PATH,
    pathParams: {},
    query: {},
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }), 'utf8'),
    sourceIp: '',
    requestId: scope.lineage.requestId,
    baseUrl: scope.urls.mcpUrl,
  };
}

/** The JSON-RPC reply in a hosted endpoint's answer: its `result`, or a failure to report. */
function replyOf(reply: Reply): { result: Record<string, unknown> } | { error: string } {
  const body = reply.raw?.body.toString() ?? '';
  let parsed: unknown;
  try {
    const type = reply.raw?.contentType ?? '';
    // An event stream carries the reply on its `data:` line; the host answers JSON, but either is MCP.
    const text = type.includes('text/event-stream')
      ? (body
          .split(/\r?\n/)
          .find((line) => line.startsWith('data:'))
          ?.slice(5) ?? '')
      : body;
    parsed = JSON.parse(text);
  } catch {
    return { error: `The MCP server answered ${reply.status} without a JSON-RPC reply.` };
  }
  const message = (Array.isArray(parsed) ? parsed[0] : parsed) as { result?: unknown; error?: { message?: unknown } } | undefined;
  if (message?.error !== undefined) return { error: String(message.error.message ?? 'The MCP server reported an error.') };
  if (typeof message?.result === 'object' && message.result !== null) return { result: message.result as Record<string, unknown> };
  return { error: `The MCP server answered ${reply.status} without a result.` };
}

/** The servers whose tools `tools/list` shows: those `?servers=` names, else the newest MAX_LISTED_SERVERS. */
async function listedServers(actor: UserActor, named: readonly string[] | null, ports: PlatformToolsPorts): Promise<McpServerRecord[]> {
  if (named !== null) {
    const found = await Promise.all(named.slice(0, MAX_LISTED_SERVERS).map((name) => ports.mcpServers.getByName(actor.userId, name)));
    return found.filter((s): s is McpServerRecord => s !== null);
  }
  return (await ports.mcpServers.listByOwner(actor.userId, {}, { limit: MAX_LISTED_SERVERS })).items;
}

/**
 * `tools/list`: the built-in tools, then the tools of the caller's hosted MCP servers as
 * `{serverName}__{tool}`, each server asked through its MCP endpoint (one free, recorded request
 * each). A server that cannot answer is left out (and logged) rather than failing the listing.
 */
export async function listTools(scope: RequestScope, named: readonly string[] | null, ports: PlatformToolsPorts): Promise<ToolDescription[]> {
  const actor = requireUser(scope.actor);
  const servers = await listedServers(actor, named, ports);
  const hosted = await Promise.all(
    servers.map(async (server): Promise<ToolDescription[]> => {
      try {
        const reply = replyOf(
          await callMcpServer(childScope(scope), { serverId: server.serverId }, undefined, hostedRequest(scope, { method: 'tools/list' }), ports, server),
        );
        if ('error' in reply) throw new Error(reply.error);
        const tools = Array.isArray(reply.result['tools']) ? (reply.result['tools'] as ToolDescription[]) : [];
        return tools.map((tool) => ({
          ...tool,
          name: `${server.serverName}${HOSTED_TOOL_SEPARATOR}${tool.name}`,
          description: `[${server.serverName}] ${tool.description ?? ''}`.trim(),
        }));
      } catch (error) {
        scope.log.warn('platform tools: a hosted MCP server did not list its tools', { serverId: server.serverId, error });
        return [];
      }
    }),
  );
  return [...BUILT_IN_TOOLS, ...hosted.flat()];
}

/** A result whose text is `value` as JSON, also given as structured content. */
function jsonResult(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function errorResult(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Parses a built-in tool's arguments; a mistake is the tool's error, naming the field, so the model can correct it. */
function argumentsOf<N extends BuiltInName>(name: N, args: unknown): z.infer<(typeof BUILT_IN)[N]['input']> {
  const parsed = BUILT_IN[name].input.safeParse(args ?? {});
  if (parsed.success) return parsed.data as z.infer<(typeof BUILT_IN)[N]['input']>;
  throw new ValidationError(
    `Invalid arguments for ${name}`,
    parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`),
  );
}

/**
 * `tools/call`. Failures of the call (not found, not allowed, no credits, bad arguments, a failed
 * run) are tool results marked `isError` with the platform's code and message, so the model reads
 * them; an unknown tool name is a protocol error (UnknownToolError).
 */
export async function callTool(scope: RequestScope, name: string, args: Record<string, unknown> | undefined, ports: PlatformToolsPorts): Promise<ToolResult> {
  try {
    if (isBuiltIn(name)) return await callBuiltIn(scope, name, args, ports);
    const at = name.indexOf(HOSTED_TOOL_SEPARATOR);
    if (at <= 0) throw new UnknownToolError(`Unknown tool: ${name}`);
    return await callHosted(scope, name.slice(0, at), name.slice(at + HOSTED_TOOL_SEPARATOR.length), args, ports);
  } catch (error) {
    if (error instanceof UnknownToolError) throw error;
    const failure = toErrorResponse(error);
    if (!failure.expected) scope.log.error('platform tool failed', { tool: name, error });
    return errorResult(`${failure.code}: ${failure.message}`);
  }
}

async function callBuiltIn(scope: RequestScope, name: BuiltInName, args: unknown, ports: PlatformToolsPorts): Promise<ToolResult> {
  const actor = requireUser(scope.actor);
  switch (name) {
    case 'search_knowledge': {
      const found = await searchFiles(actor, argumentsOf(name, args), ports);
      const hits = found.results.map((hit) => ({ file: hit.fileName, key: hit.key, chunk: hit.chunk, score: hit.score }));
      return jsonResult({ query: found.query, count: hits.length, hits, mode: found.mode });
    }
    case 'list_actions': {
      const input = argumentsOf(name, args);
      const listed = await listActions(
        actor,
        { visibility: input.scope === 'public' ? 'public' : 'all', limit: MAX_LISTED, ...(input.nameContains ? { nameContains: input.nameContains } : {}) },
        ports,
        scope.urls,
      );
      const actions = listed.actions.map((a) => ({
        actionId: a.actionId,
        actionName: a.actionName,
        description: a.description,
        parameters: a.parameters,
        owner: a.owner,
        visibility: a.visibility,
        status: a.status,
      }));
      return jsonResult({ count: actions.length, actions });
    }
    case 'run_action': {
      const input = argumentsOf(name, args);
      // The router path of `POST /action/{actionId}`: the same checks, hold, run, record and answer.
      const reply = await runAction(childScope(scope), input.actionId, eventFromBody(input.parameters), 'router', ports);
      const data = reply.data as { statusCode: number; body: unknown };
      const meta = reply.meta ?? {};
      return jsonResult({
        statusCode: data.statusCode,
        body: data.body,
        requestId: meta['requestId'],
        creditsUsed: meta['creditsUsed'],
        executionTime: meta['executionTime'],
        ...(meta['notice'] !== undefined ? { notice: meta['notice'] } : {}),
      });
    }
    case 'list_skills': {
      const input = argumentsOf(name, args);
      const listed = await listSkills(actor, { visibility: input.scope === 'public' ? 'public' : 'all', limit: MAX_LISTED }, ports, scope.urls);
      const skills = listed.skills.map((s) => ({ owner: s.owner, name: s.skillName, slug: s.slug, description: s.description, visibility: s.visibility }));
      return jsonResult({ count: skills.length, skills });
    }
    case 'get_skill': {
      const input = argumentsOf(name, args);
      const owner = input.owner ?? actor.alias;
      if (owner === null) throw new ValidationError('Invalid arguments for get_skill', ['owner: is required (your account has no alias)']);
      const skill = await getSkillBySlug(actor, owner, input.name, ports, scope.urls);
      return { content: [{ type: 'text', text: skill.skillMd }] };
    }
  }
}

/**
 * One tool of one of the caller's hosted servers, through that server's MCP endpoint: billed,
 * recorded and answered as a direct `tools/call` there; the server's result is passed on as it is.
 */
async function callHosted(
  scope: RequestScope,
  serverName: string,
  tool: string,
  args: Record<string, unknown> | undefined,
  ports: PlatformToolsPorts,
): Promise<ToolResult> {
  const actor = requireUser(scope.actor);
  const server = await ports.mcpServers.getByName(actor.userId, serverName);
  if (server === null) throw new UnknownToolError(`Unknown tool: ${serverName}${HOSTED_TOOL_SEPARATOR}${tool} (you have no MCP server named ${serverName})`);
  const message = { method: 'tools/call', params: { name: tool, arguments: args ?? {} } };
  const reply = replyOf(await callMcpServer(childScope(scope), { serverId: server.serverId }, undefined, hostedRequest(scope, message), ports, server));
  if ('error' in reply) return errorResult(`MCP server ${serverName}: ${reply.error}`);
  const content = Array.isArray(reply.result['content']) ? (reply.result['content'] as ToolResult['content']) : [];
  return { ...reply.result, content };
}
