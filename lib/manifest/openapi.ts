import * as z from 'zod';
import type { AnyRouteDefinition } from '../../functions/core/http/route.ts';
import type { AuthMode, EnvelopeStyle, Host, HttpMethod, RouteSpec } from './types.ts';

/**
 * The platform's OpenAPI 3.1 document, derived from the manifest (method, path, host, auth mode,
 * envelope style, limits) and each handler's zod schemas (body, query, path parameters), so it
 * cannot drift from what the pipeline accepts. Pure: callers load the handler definitions (the
 * reference area does it lazily) and add the request's server URLs with `withServers`.
 */

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or any other plain JSON object of the document. */
export type JsonObject = { [key: string]: unknown };

export interface OpenApiOperation {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly security: readonly Record<string, readonly string[]>[];
  readonly parameters?: readonly OpenApiParameter[];
  readonly requestBody?: {
    readonly required: boolean;
    readonly description?: string;
    readonly content: Readonly<Record<string, { readonly schema: JsonObject }>>;
  };
  readonly responses: Readonly<Record<string, JsonObject>>;
  readonly servers?: readonly { readonly url: string; readonly description: string }[];
  /** The manifest routes this operation describes: one, or one per host serving the same method and path. */
  readonly 'x-platform-routes': readonly PlatformRouteFacts[];
}

export interface OpenApiParameter {
  readonly name: string;
  readonly in: 'query' | 'path';
  readonly required: boolean;
  readonly description?: string;
  /** Only for an object of free names: `form` exploded, each field its own `name=value`. */
  readonly style?: 'form';
  readonly explode?: boolean;
  readonly schema: JsonObject;
}

/** What the manifest says of a route beyond OpenAPI's vocabulary, for readers and tools. */
export interface PlatformRouteFacts {
  readonly id: string;
  readonly host: Host;
  readonly mode: RouteSpec['mode'];
  readonly auth: AuthMode;
  readonly callers: RouteSpec['callers'];
  readonly style: EnvelopeStyle;
  readonly timeoutSec: number;
  readonly maxBodyBytes: number;
  readonly rateLimit?: RouteSpec['rateLimit'];
}

export type OpenApiPathItem = Partial<Record<Lowercase<HttpMethod>, OpenApiOperation>>;

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers?: readonly { readonly url: string; readonly description: string }[];
  readonly tags: readonly { readonly name: string }[];
  readonly paths: Readonly<Record<string, OpenApiPathItem>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonObject>>;
    readonly responses: Readonly<Record<string, JsonObject>>;
    readonly securitySchemes: Readonly<Record<string, JsonObject>>;
  };
}

export interface OpenApiInput {
  /** The manifest's routes, in its order (tags and paths keep it). */
  readonly routes: readonly RouteSpec[];
  /** The handler definition of a route: where its zod schemas are. */
  readonly definitionOf: (route: RouteSpec) => AnyRouteDefinition;
  readonly version: string;
}

/**
 * Credentials as `resolveActor` reads them (SPEC part 5), first match wins: a bearer token, else the
 * two legacy headers, else the two legacy query parameters. Each pair is one requirement (both needed).
 */
const SECURITY_SCHEMES: Readonly<Record<string, JsonObject>> = {
  bearerToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'A user access token (`svc_ut_...`), a role token (`svc_rt_...`), a run token handed to user code, or an identity-provider session (ID token).',
  },
  secretKeyUserIdHeader: { type: 'apiKey', in: 'header', name: 'X-Svc-UserId', description: 'Legacy scheme: the account id, with X-Svc-SecretKey.' },
  secretKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Svc-SecretKey', description: "Legacy scheme: the account's secret key, with X-Svc-UserId." },
  secretKeyUserIdQuery: { type: 'apiKey', in: 'query', name: 'userId', description: 'Legacy scheme in the query: the account id, with secretServiceKey.' },
  secretKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'secretServiceKey',
    description: "Legacy scheme in the query: the account's secret key, with userId. Prefer the headers: URLs end up in logs.",
  },
};

const CREDENTIALS: readonly Record<string, readonly string[]>[] = [
  { bearerToken: [] },
  { secretKeyUserIdHeader: [], secretKeyHeader: [] },
  { secretKeyUserIdQuery: [], secretKeyQuery: [] },
];

/** An empty requirement: anonymous callers are admitted too (OpenAPI's way to say "optional"). */
const SECURITY_BY_AUTH: Readonly<Record<AuthMode, readonly Record<string, readonly string[]>[]>> = {
  public: [],
  optional: [...CREDENTIALS, {}],
  required: CREDENTIALS,
  admin: CREDENTIALS,
};

const AUTH_WORDS: Readonly<Record<AuthMode, string>> = {
  public: 'Public: credentials are not read.',
  optional: 'Credentials optional: anonymous callers see public resources only; a credential that is sent must be valid.',
  required: 'Credentials required.',
  admin: 'Credentials of a platform operator required (role and run tokens never count as one).',
};

/**
 * The envelopes of functions/core/http/envelope.ts (SPEC parts 1 and 7). Payloads are not
 * described yet: handlers declare what they read, not what they answer.
 */
const ENVELOPE_SCHEMAS: Readonly<Record<string, JsonObject>> = {
  SuccessA: {
    type: 'object',
    description: 'Envelope A (agents, actions): `success` true, the payload in `data`; action runs add `meta`.',
    required: ['success', 'data'],
    properties: { success: { const: true }, data: {}, meta: { type: 'object' } },
  },
  ErrorA: {
    type: 'object',
    description: 'Envelope A error: `success` false, `error` with a machine-readable `code` and a `message`.',
    required: ['success', 'error', 'requestId'],
    properties: {
      success: { const: false },
      error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
      requestId: { type: 'string' },
    },
  },
  SuccessB: {
    type: 'object',
    description: 'Envelope B (most endpoints): the payload in `data`, with the request lineage.',
    required: ['data', 'requestId', 'rootRequestId', 'parentRequestId'],
    properties: { data: {}, requestId: { type: 'string' }, rootRequestId: { type: 'string' }, parentRequestId: { type: ['string', 'null'] } },
  },
  ErrorB: {
    type: 'object',
    description: 'Envelope B error: the message in `error`, a machine-readable `code`, and the request lineage.',
    required: ['error', 'code', 'requestId', 'rootRequestId', 'parentRequestId'],
    properties: {
      error: { type: 'string' },
      code: { type: 'string' },
      requestId: { type: 'string' },
      rootRequestId: { type: 'string' },
      parentRequestId: { type: ['string', 'null'] },
    },
  },
  ErrorWebsite: { type: 'object', description: 'Website hosting error: the message alone.', required: ['error'], properties: { error: { type: 'string' } } },
  JsonRpcAnswer: {
    description:
      "An MCP server's JSON-RPC 2.0 answer (one, or a batch's): `result` on success, `error` (`code`, `message`, `data.code` for the platform's refusals) otherwise.",
    oneOf: [{ $ref: '#/components/schemas/JsonRpcResponse' }, { type: 'array', items: { $ref: '#/components/schemas/JsonRpcResponse' } }],
  },
  JsonRpcResponse: {
    type: 'object',
    required: ['jsonrpc', 'id'],
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'number', 'null'] },
      result: { type: 'object' },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
      },
    },
  },
};

const SUCCESS_SCHEMA: Readonly<Record<EnvelopeStyle, JsonObject>> = {
  A: { $ref: '#/components/schemas/SuccessA' },
  B: { $ref: '#/components/schemas/SuccessB' },
  // Website hosting answers like style B; only its errors differ (envelope.ts).
  website: { $ref: '#/components/schemas/SuccessB' },
};

const ERROR_SCHEMA: Readonly<Record<EnvelopeStyle, JsonObject>> = {
  A: { $ref: '#/components/schemas/ErrorA' },
  B: { $ref: '#/components/schemas/ErrorB' },
  website: { $ref: '#/components/schemas/ErrorWebsite' },
};

/** Methods whose JSON body the pipeline parses (pipeline.ts); the others never have one. */
const METHODS_WITH_BODY: ReadonlySet<HttpMethod> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** How each host is named where an operation lists its servers. */
const HOST_WORDS: Readonly<Record<Host, string>> = {
  base: 'the main API ({base_url})',
  stream: 'the streaming host ({stream_url})',
  mcp: 'the MCP host ({mcp_url})',
  voice: 'the voice host ({voice_url})',
  cdn: 'the CDN host ({cdn_url})',
  site: 'the website host ({site_url})',
  code: 'the code-server host ({code_url})',
};

/**
 * Builds the document. Routes sharing a method and path on different hosts (buffered chat on the
 * base host, streaming chat on the stream host) become one operation with a server per host: OpenAPI
 * keys operations by path and method only. They must then read the same schemas, or this throws.
 */
export function buildOpenApiDocument(input: OpenApiInput): OpenApiDocument {
  const grouped = new Map<string, RouteSpec[]>();
  for (const route of input.routes) {
    const key = `${route.method} ${route.path}`;
    grouped.set(key, [...(grouped.get(key) ?? []), route]);
  }
  const idCounts = new Map<string, number>();
  for (const route of input.routes) idCounts.set(route.id, (idCounts.get(route.id) ?? 0) + 1);

  const paths: Record<string, OpenApiPathItem> = {};
  for (const group of grouped.values()) {
    const first = group[0]!;
    const item = (paths[openApiPath(first.path)] ??= {});
    item[lowerMethod(first.method)] = operationOf(group, input.definitionOf, (idCounts.get(first.id) ?? 0) > 1);
  }
  const tags = [...new Set(input.routes.map((r) => r.area))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent platform API',
      version: input.version,
      description: [
        'Generated by the platform from its route manifest and the zod schemas its handlers validate requests with.',
        'Success and error bodies use envelope A (agents, actions) or B (the rest); see the `SuccessA`, `ErrorA`, `SuccessB` and `ErrorB` schemas.',
        'Some routes live on other hosts (streaming chat, MCP): their operations list those servers, and `/.well-known/platform.json` gives every host URL.',
      ].join('\n\n'),
    },
    tags,
    paths,
    components: { schemas: ENVELOPE_SCHEMAS, responses: errorResponses(), securitySchemes: SECURITY_SCHEMES },
  };
}

/**
 * The document with the servers of one request: the base host for the whole document, and the
 * hosts of operations served elsewhere. Kept apart from `buildOpenApiDocument` because the URLs may
 * be derived from the request (the cloud API's stage URL), while the rest is built once per process.
 */
export function withServers(document: OpenApiDocument, urlOf: (host: Host) => string): OpenApiDocument {
  const paths: Record<string, OpenApiPathItem> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    const withHosts: OpenApiPathItem = {};
    for (const [method, operation] of Object.entries(item) as [keyof OpenApiPathItem, OpenApiOperation][]) {
      const hosts = [...new Set(operation['x-platform-routes'].map((r) => r.host))];
      withHosts[method] =
        hosts.length === 1 && hosts[0] === 'base'
          ? operation
          : { ...operation, servers: hosts.map((host) => ({ url: urlOf(host), description: `On ${HOST_WORDS[host]}` })) };
    }
    paths[path] = withHosts;
  }
  return { ...document, servers: [{ url: urlOf('base'), description: HOST_WORDS.base }], paths };
}

function operationOf(group: readonly RouteSpec[], definitionOf: OpenApiInput['definitionOf'], sharedHandler: boolean): OpenApiOperation {
  const first = group[0]!;
  const label = `${first.method} ${first.path}`;
  const schemas = group.map((route) => requestSchemas(route, definitionOf(route)));
  const agreed = schemas[0]!;
  // What the routes read must agree; what they answer only among buffered ones (a stream, e.g. the
  // streaming chat beside the buffered one, answers no envelope: its media types are added apart).
  const reads = ({ body, query, params, rawBody, openQuery }: RequestSchemas) => JSON.stringify({ body, query, params, rawBody, openQuery });
  const answers = new Set(group.flatMap((route, i) => (route.mode === 'buffered' ? [JSON.stringify(schemas[i])] : [])));
  const differing = schemas.some((s) => reads(s) !== reads(agreed)) || answers.size > 1;
  if (differing || group.some((r) => r.auth !== first.auth || r.style !== first.style))
    throw new Error(
      `${label} is served on several hosts (${group.map((r) => r.id).join(', ')}) with different schemas or auth: one OpenAPI operation cannot describe both.`,
    );

  const parameters = [
    ...pathParameters(first.path, agreed.params, label),
    ...(agreed.query ? objectParameters(agreed.query, 'query', label) : []),
    ...(agreed.openQuery !== undefined && first.method === 'GET' ? [openQueryParameter(agreed.openQuery)] : []),
  ];
  const readsBody = METHODS_WITH_BODY.has(first.method);
  return {
    operationId: camel(first.handler) + (sharedHandler ? first.method.charAt(0) + first.method.slice(1).toLowerCase() : ''),
    summary: sentence(first.handler),
    description: describeRoutes(group),
    tags: [first.area],
    security: SECURITY_BY_AUTH[first.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(readsBody && agreed.body
      ? { requestBody: { required: hasRequiredFields(agreed.body), content: { 'application/json': { schema: agreed.body } } } }
      : readsBody && agreed.rawBody
        ? { requestBody: rawRequestBody(agreed.rawBody) }
        : {}),
    responses: responsesOf(group, schemas, readsBody, agreed.body !== undefined || agreed.query !== undefined || agreed.params !== undefined),
    'x-platform-routes': group.map(factsOf),
  };
}

interface RequestSchemas {
  readonly body?: JsonObject;
  readonly query?: JsonObject;
  readonly params?: JsonObject;
  /** The success's `data`, as the handler answers it (`io: 'output'`). */
  readonly response?: JsonObject;
  /** The media types of an answer sent without an envelope. */
  readonly rawContentType?: readonly string[];
  /** The media types of a body the handler reads itself. */
  readonly rawBody?: readonly string[];
  /** What a query string of free names is, for a `GET` that reads it itself. */
  readonly openQuery?: string;
}

/**
 * A body the handler reads as bytes (a messaging service's webhook, signed over them): each media
 * type with the shape that type carries, never a schema of the service's payload, which is the
 * service's own and changes with it.
 */
function rawRequestBody(types: readonly string[]): NonNullable<OpenApiOperation['requestBody']> {
  return {
    required: false,
    description: `The service's own payload, read as sent (${types.map((type) => `\`${type}\``).join(' or ')}, by service): the signature is checked over its bytes.`,
    content: Object.fromEntries(types.map((type) => [type, { schema: rawShapeOf(type) }])),
  };
}

/** Fields of free names, each a string: a form's body, or a query string of the caller's names. */
const STRING_FIELDS: JsonObject = { type: 'object', additionalProperties: { type: 'string' } };

/** What a media type carries when the document does not describe the content itself. */
function rawShapeOf(type: string): JsonObject {
  if (type === 'application/json') return { type: 'object' };
  if (type === 'application/x-www-form-urlencoded') return STRING_FIELDS;
  return { type: 'string' };
}

function requestSchemas(route: RouteSpec, definition: AnyRouteDefinition): RequestSchemas {
  if (definition.kind !== route.mode) throw new Error(`${route.id}: the handler is ${definition.kind} but the manifest says ${route.mode}.`);
  const convert = (part: 'body' | 'query' | 'params') => {
    const schema = definition[part];
    return schema === undefined ? {} : { [part]: jsonSchemaOf(schema, `${route.id} ${part}`) };
  };
  const answer =
    definition.kind === 'buffered'
      ? {
          ...(definition.response === undefined ? {} : { response: jsonSchemaOf(definition.response, `${route.id} response`, 'output') }),
          ...(definition.rawContentType === undefined ? {} : { rawContentType: [definition.rawContentType].flat() }),
          ...(definition.rawBody === undefined ? {} : { rawBody: definition.rawBody }),
          ...(definition.openQuery === undefined ? {} : { openQuery: definition.openQuery }),
        }
      : {};
  return { ...convert('body'), ...convert('query'), ...convert('params'), ...answer };
}

/**
 * The JSON Schema of what a caller sends (`io: 'input'`: before defaults and transforms apply), or
 * of what a handler answers (`io: 'output'`), in
 * draft 2020-12, the dialect of OpenAPI 3.1. `$schema` is dropped (the document sets the dialect).
 * A recursive or registered schema comes with `$defs` and `$ref`s (`#/$defs/...`, `#`), which would
 * resolve against the document's root once embedded, so such a schema is refused here.
 */
export function jsonSchemaOf(schema: z.ZodType, where: string, io: 'input' | 'output' = 'input'): JsonObject {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', ...(io === 'output' ? { unrepresentable: 'any' as const } : {}) }) as JsonObject;
  delete json['$schema'];
  if (hasReferences(json))
    throw new Error(`${where}: the schema has $defs or $ref (a recursive or registered schema), which the OpenAPI generator does not place.`);
  return json;
}

function hasReferences(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasReferences);
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, inner]) => key === '$ref' || key === '$defs' || hasReferences(inner));
}

/** Every `{name}` of the template, in order, from the params schema when it has one, else a string. */
/**
 * A route's path as OpenAPI writes it: a last `{rest+}` (the rest of the path, the site host's)
 * is a plain `{rest}`, which OpenAPI's templates know; its operation's description says more.
 */
export function openApiPath(path: string): string {
  return path.replace(/\{(\w+)\+\}/g, '{$1}');
}

function pathParameters(path: string, params: JsonObject | undefined, label: string): OpenApiParameter[] {
  const names = [...openApiPath(path).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const declared = params ? objectParameters(params, 'path', label) : [];
  const extra = declared.filter((p) => !names.includes(p.name));
  if (extra.length > 0) throw new Error(`${label}: path parameters ${extra.map((p) => p.name).join(', ')} are not in the path template.`);
  return names.map((name) => declared.find((p) => p.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } });
}

/** The fields of an object schema as parameters; query and path values arrive as strings, which the schema's coercion reads. */
function objectParameters(schema: JsonObject, location: 'query' | 'path', label: string): OpenApiParameter[] {
  const properties = schema['properties'];
  if (schema['type'] !== 'object' || typeof properties !== 'object' || properties === null)
    throw new Error(`${label}: the ${location} schema must be an object of named fields to become parameters.`);
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  return Object.entries(properties as Record<string, JsonObject>).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

/**
 * A query string whose names the caller chooses, as OpenAPI writes one: an object parameter, `form`
 * style, exploded, so `{city: 'Paris'}` is sent as `city=Paris` (the typed client serializes objects
 * this way: clients/typescript/src/index.ts). Values arrive as strings.
 */
function openQueryParameter(description: string): OpenApiParameter {
  return {
    name: 'parameters',
    in: 'query',
    required: false,
    description,
    style: 'form',
    explode: true,
    schema: STRING_FIELDS,
  };
}

/** Error answers every route shares, by kind: one response component per kind and envelope style. */
const ERROR_RESPONSES: Readonly<Record<string, JsonObject>> = {
  InvalidRequest: { description: 'Invalid parameters, malformed JSON or a body that is not `application/json`; the message names every field.' },
  Unauthenticated: { description: 'Missing or invalid credentials.' },
  FullScopeRequired: { description: 'A role or run token: this route needs a full-scope credential.' },
  OperatorRequired: { description: 'Not a platform operator, or a role or run token.' },
  PayloadTooLarge: { description: "Body larger than the route's limit (its description gives it)." },
  RateLimited: { description: 'Rate limited.', headers: { 'Retry-After': { description: 'Seconds until the window ends.', schema: { type: 'integer' } } } },
  OtherError: { description: 'Any other failure, in the same envelope (404, 409, 500, 504, ...).' },
};

const STYLE_SUFFIX: Readonly<Record<EnvelopeStyle, string>> = { A: 'A', B: 'B', website: 'Website' };

function errorResponses(): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {};
  for (const style of Object.keys(STYLE_SUFFIX) as EnvelopeStyle[])
    for (const [kind, response] of Object.entries(ERROR_RESPONSES))
      responses[kind + STYLE_SUFFIX[style]] = { ...response, content: { 'application/json': { schema: ERROR_SCHEMA[style] } } };
  return responses;
}

/** `schemas[i]` are `group[i]`'s. */
function responsesOf(group: readonly RouteSpec[], schemas: readonly RequestSchemas[], readsBody: boolean, validates: boolean): Record<string, JsonObject> {
  const first = group[0]!;
  const error = (kind: keyof typeof ERROR_RESPONSES & string) => ({ $ref: `#/components/responses/${kind}${STYLE_SUFFIX[first.style]}` });
  const content: Record<string, JsonObject> = {};
  group.forEach((route, i) => Object.assign(content, successContent(route, schemas[i]!)));
  const responses: Record<string, JsonObject> = { '2XX': { description: successWords(group, schemas), content } };
  if (validates || readsBody) responses['400'] = error('InvalidRequest');
  if (first.auth !== 'public') responses['401'] = error('Unauthenticated');
  if (first.auth === 'admin') responses['403'] = error('OperatorRequired');
  else if (first.auth !== 'public' && first.callers === 'full') responses['403'] = error('FullScopeRequired');
  if (readsBody) responses['413'] = error('PayloadTooLarge');
  if (first.rateLimit) responses['429'] = error('RateLimited');
  responses['default'] = error('OtherError');
  return responses;
}

function successContent(route: RouteSpec, schemas: RequestSchemas): Record<string, JsonObject> {
  // Every streaming route today is a chat stream, which answers Server-Sent Events when asked
  // (`Accept: text/event-stream`; functions/agents/chat.stream.ts) and plain text otherwise.
  if (route.mode === 'streaming') return { 'text/plain': { schema: { type: 'string' } }, 'text/event-stream': { schema: { type: 'string' } } };
  // The MCP host passes the MCP server's own answer through (Streamable HTTP), not an envelope.
  if (route.host === 'mcp')
    return { 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcAnswer' } }, 'text/event-stream': { schema: { type: 'string' } } };
  if (schemas.rawContentType !== undefined)
    return Object.fromEntries(
      schemas.rawContentType.map((type) => {
        const mediaType = type.split(';')[0]!.trim();
        return [mediaType, { schema: rawShapeOf(mediaType) }];
      }),
    );
  const envelope = SUCCESS_SCHEMA[route.style];
  if (schemas.response === undefined) return { 'application/json': { schema: envelope } };
  // The envelope with its `data` typed: a generator reads `SuccessB & { data: ... }`.
  return { 'application/json': { schema: { allOf: [envelope, { type: 'object', required: ['data'], properties: { data: schemas.response } }] } } };
}

function successWords(group: readonly RouteSpec[], schemas: readonly RequestSchemas[]): string {
  return group
    .map((route, i) => {
      const where = group.length > 1 ? `On ${HOST_WORDS[route.host]}: ` : '';
      const { rawContentType } = schemas[i]!;
      if (rawContentType !== undefined) return `${where}the content itself (${rawContentType.map((type) => `\`${type}\``).join(' or ')}), without an envelope.`;
      if (route.mode === 'streaming')
        return `${where}a stream of text written as it is produced (\`text/plain; charset=utf-8\`), or Server-Sent Events (\`meta\`, \`text\`, \`tool\`, \`error\`, \`metrics\`) when the request sends \`Accept: text/event-stream\`; failures after it starts are reported in-band.`;
      if (route.host === 'mcp') return `${where}the MCP server's own answer (MCP Streamable HTTP: JSON-RPC as JSON or an event stream).`;
      return `${where}success in envelope ${route.style} (200, or 201 when something is created).`;
    })
    .join(' ');
}

function describeRoutes(group: readonly RouteSpec[]): string {
  const first = group[0]!;
  const lines = [AUTH_WORDS[first.auth]];
  if (first.auth !== 'public' && first.callers === 'full') lines.push('Role and run tokens are refused (403): this route creates, changes or deletes.');
  if (first.callers === 'agent') lines.push('Agent-scoped tokens (embed visitors, phone calls) are admitted for the agents they were issued for.');
  for (const route of group) {
    const where = group.length > 1 || route.host !== 'base' ? `On ${HOST_WORDS[route.host]}, ` : '';
    const limits = [`times out after ${route.timeoutSec} s`];
    if (METHODS_WITH_BODY.has(route.method)) limits.push(`accepts bodies up to ${route.maxBodyBytes} bytes`);
    if (route.rateLimit)
      limits.push(
        `allows ${route.rateLimit.limit} requests per ${route.rateLimit.windowSec} s per caller` +
          (route.rateLimit.anonymousLimit === undefined ? '' : ` (${route.rateLimit.anonymousLimit} for anonymous callers, per source address)`),
      );
    lines.push(`${where}${route.mode === 'streaming' ? 'streams its answer; ' : ''}${limits.join(', ')}.`.replace(/^./, (c) => c.toUpperCase()));
  }
  return lines.join('\n\n');
}

function factsOf(route: RouteSpec): PlatformRouteFacts {
  return {
    id: route.id,
    host: route.host,
    mode: route.mode,
    auth: route.auth,
    callers: route.callers,
    style: route.style,
    timeoutSec: route.timeoutSec,
    maxBodyBytes: route.maxBodyBytes,
    ...(route.rateLimit ? { rateLimit: route.rateLimit } : {}),
  };
}

/** A body may be left out (the pipeline reads a missing one as `{}`) unless some field is required. */
function hasRequiredFields(schema: JsonObject): boolean {
  const required = schema['required'];
  return Array.isArray(required) && required.length > 0;
}

function lowerMethod(method: HttpMethod): Lowercase<HttpMethod> {
  return method.toLowerCase() as Lowercase<HttpMethod>;
}

/** `create-agent` -> `createAgent`. */
function camel(handler: string): string {
  return handler.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `create-agent` -> `Create agent`. */
function sentence(handler: string): string {
  const words = handler.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
