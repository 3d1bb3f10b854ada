import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineRoute, type AnyRouteDefinition } from '../../functions/core/http/route.ts';
import { publicUrls } from '../../functions/core/http/public-urls.ts';
import { openApiDocument } from '../../functions/reference/reference.service.ts';
import { loadAreas } from '../../lib/local/handlers.ts';
import { areas } from '../../lib/manifest/areas.ts';
import { buildOpenApiDocument, openApiPath, withServers, type JsonObject, type OpenApiDocument, type OpenApiOperation } from '../../lib/manifest/openapi.ts';
import { routes } from '../../lib/manifest/routes.ts';
import type { RouteSpec } from '../../lib/manifest/types.ts';

const BASE = 'https://api.example.test/prod';
const STREAM = 'https://stream.example.test';
const urls = { ...publicUrls({} as never, BASE), streamUrl: STREAM };

/** What the caller sends, as zod describes it: the expectation, computed apart from the generator. */
function inputSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' }) as JsonObject;
  return json;
}

function operationOf(document: OpenApiDocument, route: RouteSpec): OpenApiOperation {
  const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase() as 'get'];
  if (operation === undefined) throw new Error(`${route.method} ${route.path} (${route.id}) is not in the document`);
  return operation;
}

describe('the OpenAPI document of the manifest', () => {
  let document: OpenApiDocument;
  /** Each route's definition as the local platform loads it (lib/local/handlers.ts), not through the generator's loader. */
  const definitions = new Map<string, AnyRouteDefinition>();

  beforeAll(async () => {
    document = await openApiDocument('1.2.3', urls);
    const loaded = await loadAreas(areas);
    for (const lazy of [...loaded.buffered, ...loaded.streaming]) {
      const bound = await lazy.load();
      definitions.set(`${bound.spec.method} ${bound.spec.host} ${bound.spec.path}`, bound.definition);
    }
  });

  it('is a valid OpenAPI 3.1 document for an OpenAPI parser', async () => {
    // Act: the parser dereferences in place, so it gets a copy
    const result = await validate(structuredClone(document) as never);
    // Assess
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    expect(result.specification).toBe('OpenAPI');
    expect(result.warnings).toEqual([]);
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.2.3');
  });

  it('would be refused by the parser with an undeclared path parameter, so the check above can fail', async () => {
    // Prepare
    const broken = structuredClone(document) as { paths: Record<string, Record<string, { parameters?: unknown }>> };
    delete broken.paths['/agent/{agentId}']!['get']!.parameters;
    // Act
    const result = await validate(broken as never);
    // Assess
    expect(result.valid).toBe(false);
  });

  it.each(routes.map((r) => [`${r.method} ${r.host} ${r.path}`, r] as const))('has %s with its manifest facts', (_label, route) => {
    // Act
    const operation = operationOf(document, route);
    // Assess
    expect(operation['x-platform-routes']).toContainEqual(
      expect.objectContaining({ id: route.id, host: route.host, mode: route.mode, auth: route.auth, callers: route.callers, style: route.style }),
    );
    expect(operation.tags).toEqual([route.area]);
    const anonymousAllowed = operation.security.some((requirement) => Object.keys(requirement).length === 0);
    if (route.auth === 'public') expect(operation.security).toEqual([]);
    else expect(anonymousAllowed).toBe(route.auth === 'optional');
    const success = operation.responses['2XX'] as { content: Record<string, unknown> };
    if (route.mode === 'streaming') expect(Object.keys(success.content)).toEqual(expect.arrayContaining(['text/plain', 'text/event-stream']));
  });

  it.each(routes.map((r) => [`${r.method} ${r.host} ${r.path}`, r] as const))('has the request schemas of %s', (_label, route) => {
    // Prepare
    const definition = definitions.get(`${route.method} ${route.host} ${route.path}`);
    if (definition === undefined) throw new Error(`no definition loaded for ${route.id}`);
    // Act
    const operation = operationOf(document, route);
    // Assess: the body as zod gives it, where the method has one (the pipeline reads no GET body:
    // a handler serving GET and POST declares one for POST); each query and path field as a parameter
    if (definition.body && route.method !== 'GET') expect(operation.requestBody?.content['application/json']?.schema).toEqual(inputSchema(definition.body));
    else if (definition.kind === 'buffered' && definition.rawBody && route.method !== 'GET')
      // A body read raw (a webhook signed over its bytes): each media type it is sent in, no payload schema.
      expect(Object.keys(operation.requestBody?.content ?? {})).toEqual(definition.rawBody);
    else expect(operation.requestBody).toBeUndefined();
    for (const [location, schema] of [
      ['query', definition.query],
      ['path', definition.params],
    ] as const) {
      const parameters = (operation.parameters ?? []).filter((p) => p.in === location);
      if (schema === undefined) {
        // A GET reading its own query string (an action's parameters): one free-form object, `form` exploded.
        const open = definition.kind === 'buffered' && definition.openQuery !== undefined && route.method === 'GET';
        if (location === 'query')
          expect(parameters).toEqual(open ? [expect.objectContaining({ name: 'parameters', style: 'form', explode: true, required: false })] : []);
        continue;
      }
      const json = inputSchema(schema) as { properties: Record<string, JsonObject>; required?: string[] };
      expect(parameters.map((p) => p.name).sort()).toEqual(Object.keys(json.properties).sort());
      for (const parameter of parameters) {
        const { description: _description, ...property } = json.properties[parameter.name]!;
        expect(parameter.schema).toEqual(property);
        expect(parameter.required).toBe(location === 'path' || (json.required ?? []).includes(parameter.name));
      }
    }
    // Every `{name}` of the template is a path parameter, whether or not the handler validates it.
    const templated = [...openApiPath(route.path).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    expect((operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name)).toEqual(templated);
  });

  it('gives every schema in it as valid JSON Schema 2020-12', () => {
    // Prepare
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemas: JsonObject[] = [];
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item)) {
        for (const media of Object.values(operation.requestBody?.content ?? {})) schemas.push(media.schema);
        for (const parameter of operation.parameters ?? []) schemas.push(parameter.schema);
      }
    // Act + Assess: compiling throws on an invalid schema
    expect(schemas.length).toBeGreaterThan(40);
    for (const schema of schemas) ajv.compile(schema);
    const rejects = () => ajv.compile({ type: 'objekt' });
    expect(rejects).toThrow();
  });

  it('names operations uniquely, a handler serving several methods by its method too', () => {
    // Prepare
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((o) => o.operationId));
    // Assess
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/agent/create']?.post?.operationId).toBe('createAgent');
    expect(document.paths['/agent/update']?.put?.operationId).toBe('updateAgentPut');
    expect(document.paths['/agent/update']?.post?.operationId).toBe('updateAgentPost');
  });

  it('puts the base URL first and the streaming host on the operations it serves', () => {
    // Assess
    expect(document.servers).toEqual([{ url: BASE, description: expect.any(String) }]);
    const chat = document.paths['/agent/{agentId}/chat']!;
    expect(chat.post?.servers?.map((s) => s.url)).toEqual([BASE, STREAM]);
    expect(chat.get?.servers?.map((s) => s.url)).toEqual([STREAM]);
    expect(document.paths['/agent/create']?.post?.servers).toBeUndefined();
  });
});

describe('the OpenAPI generator', () => {
  const route = (input: Partial<RouteSpec> & Pick<RouteSpec, 'id' | 'path'>): RouteSpec => ({
    method: 'POST',
    host: 'base',
    area: 'sample',
    handler: input.id.split('.')[1] ?? input.id,
    auth: 'required',
    callers: 'full',
    mode: 'buffered',
    style: 'B',
    timeoutSec: 29,
    maxBodyBytes: 1024,
    ...input,
  });
  const run = async () => undefined;

  it('refuses one method and path on two hosts with different bodies, which one operation cannot describe', () => {
    // Prepare
    const a = route({ id: 'sample.a', path: '/x' });
    const b = route({ id: 'sample.b', path: '/x', host: 'stream' });
    const bodies = new Map([
      [a, defineRoute({ body: z.object({ one: z.string() }), run })],
      [b, defineRoute({ body: z.object({ two: z.string() }), run })],
    ]);
    // Act + Assess
    expect(() => buildOpenApiDocument({ routes: [a, b], version: '0', definitionOf: (r) => bodies.get(r)! })).toThrow(/several hosts/);
  });

  it('refuses a schema with $defs, whose references would resolve against the document root', () => {
    // Prepare: a recursive schema is emitted with $defs
    const node: z.ZodType = z.object({
      name: z.string(),
      get children() {
        return z.array(node);
      },
    });
    const r = route({ id: 'sample.tree', path: '/tree' });
    // Act + Assess
    expect(() => buildOpenApiDocument({ routes: [r], version: '0', definitionOf: () => defineRoute({ body: node, run }) })).toThrow(/\$defs/);
  });

  it('refuses path parameters that are not in the template', () => {
    // Prepare
    const r = route({ id: 'sample.get', path: '/things/{thingId}', method: 'GET' });
    const definition = defineRoute({ params: z.object({ thingId: z.string(), other: z.string() }), run });
    // Act + Assess
    expect(() => buildOpenApiDocument({ routes: [r], version: '0', definitionOf: () => definition })).toThrow(/other/);
  });

  it('describes a route with no schemas, declaring its template parameters as strings', () => {
    // Prepare
    const r = route({ id: 'sample.get', path: '/things/{thingId}', method: 'GET', auth: 'public' });
    // Act
    const document = withServers(buildOpenApiDocument({ routes: [r], version: '0', definitionOf: () => defineRoute({ run }) }), () => BASE);
    // Assess
    const operation = document.paths['/things/{thingId}']?.get;
    expect(operation?.parameters).toEqual([{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(operation?.requestBody).toBeUndefined();
    expect(operation?.security).toEqual([]);
  });
});
