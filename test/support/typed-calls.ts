/**
 * Recorded HTTP traffic as calls of the typed client (clients/typescript), for the compiler to check
 * (issue 38): each request to a host of the OpenAPI document becomes `client.POST('/template', {...})`
 * with its recorded values as literals, its init checked with `satisfies FetchOptions<...>` (the
 * client's own parameter is generic, so only `satisfies` gives tsc's excess-property check), and each
 * JSON answer a constant annotated with the generated type of its path, method, status and media type.
 * A field the document lacks, a missing required one or a wrong type is then a diagnostic, named by
 * the recorded call it came from.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

type Json = Record<string, any>;

const repo = fileURLToPath(new URL('../../', import.meta.url));
const clientModule = fileURLToPath(new URL('../../clients/typescript/src/index.ts', import.meta.url));
const typesModule = fileURLToPath(new URL('../../clients/typescript/src/api.ts', import.meta.url));

/** One request and its answer, as a recording proxy saw them. */
export interface RecordedExchange {
  readonly method: string;
  /** Absolute, with the query. */
  readonly url: string;
  readonly requestContentType: string;
  readonly requestBody: Buffer;
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

export interface Operation {
  readonly method: string;
  readonly template: string;
  /** The server the operation is served on (no trailing slash). */
  readonly server: string;
  readonly serverDescription: string;
  /** The full URL without its query: the server's and the template's, path parameters captured in order. */
  readonly pattern: RegExp;
  readonly parameterNames: readonly string[];
  /** Literal segments first: `/agent/s/{owner}/{slug}` before `/agent/{agentId}/...`, as the router does. */
  readonly literals: number;
  readonly pointer: string;
  readonly operation: Json;
}

/** Every operation of the document, once per server it is served on, most literal path segments first. */
export function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(document['paths'] as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      // An operation served on several hosts (buffered and streaming chat) lists a server for each.
      for (const server of (operation.servers ?? document['servers']) as Json[]) {
        const base = String(server['url']).replace(/\/$/, '');
        const full = `${base}${template}`;
        const pattern = new RegExp(`^${full.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)')}$`);
        const parameterNames = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
        const literals = new URL(full).pathname.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length;
        const pointer = `#/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}`;
        const serverDescription = String(server['description'] ?? '');
        operations.push({ method: method.toUpperCase(), template, server: base, serverDescription, pattern, parameterNames, literals, pointer, operation });
      }
    }
  }
  return operations.sort((a, b) => b.literals - a.literals);
}

/** The operation a request is for (HEAD as GET), by its full URL. */
export function operationFor(operations: readonly Operation[], method: string, url: string): Operation | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const { origin, pathname } = new URL(url);
  return operations.find((o) => o.method === wanted && o.pattern.test(`${origin}${pathname}`));
}

/** The response object for `status`: its own code, its class (`2XX`), else `default`; `$ref`s to components followed. */
export function responseFor(document: Json, operation: Json, status: number): { key: string; response: Json } | null {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    const found = operation['responses'][key];
    if (found === undefined) continue;
    const ref = found['$ref'] as string | undefined;
    return { key, response: ref === undefined ? found : document['components']['responses'][ref.split('/').pop()!] };
  }
  return null;
}

export const callLabel = (exchange: RecordedExchange): string => `${exchange.method} ${exchange.url} -> ${exchange.status}`;

export interface TypedCallsSource {
  /** The TypeScript source: one call per typed exchange, and its answer when that is JSON. */
  readonly text: string;
  /** Where it is meant to be written (its imports are relative to it). */
  readonly file: string;
  /** Lines (0-based, inclusive) of each call and answer in `text`, with the recorded call they came from. */
  readonly spans: readonly Span[];
  readonly typed: readonly { readonly exchange: RecordedExchange; readonly operation: Operation }[];
  /** Not API calls, with the reason: not on a host of the document, or a body that is not JSON. */
  readonly skipped: readonly { readonly exchange: RecordedExchange; readonly reason: string }[];
  /** Requests to a host of the document that no operation describes. */
  readonly unmatched: readonly RecordedExchange[];
}

interface Span {
  readonly first: number;
  readonly last: number;
  readonly call: string;
  /** `GET /action/{actionId}`: the operation's method and template. */
  readonly operation: string;
  readonly part: 'call' | 'answer';
}

/** One compiler diagnostic of the typed calls; `call`, `operation` and `part` are null outside any call (imports, clients). */
export interface TypeDiagnostic {
  readonly call: string | null;
  readonly operation: string | null;
  readonly part: 'call' | 'answer' | null;
  /** `file:line` in the written source. */
  readonly at: string;
  readonly message: string;
}

export const formatDiagnostic = (d: TypeDiagnostic): string =>
  `${d.call ?? 'the generated source'}${d.part === null ? '' : ` (${d.part})`}, ${d.at}: ${d.message}`;

const isJson = (contentType: string) => /^application\/([\w.+-]+\+)?json$/.test(contentType.split(';')[0]!.trim());

/** The JSON types a parameter's schema allows (`type`, and its `anyOf`/`oneOf` members'). */
function typesOf(schema: Json | undefined): Set<string> {
  if (schema === undefined) return new Set();
  const own = schema['type'] === undefined ? [] : [schema['type']].flat();
  const members = [...(schema['anyOf'] ?? []), ...(schema['oneOf'] ?? [])] as Json[];
  return new Set<string>([...own, ...members.flatMap((member) => [...typesOf(member)])]);
}

/** A recorded parameter's text as the literal a client would pass: a number or boolean where the schema says so. */
function parameterLiteral(values: readonly string[], schema: Json | undefined): unknown {
  const types = typesOf(schema);
  if (types.has('array')) return values.map((value) => parameterLiteral([value], schema?.['items']));
  if (values.length !== 1) return values;
  const value = values[0]!;
  if ((types.has('integer') || types.has('number')) && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (types.has('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** JSON is a TypeScript literal; indented one step, as it follows a call's or a constant's first line. */
const literal = (value: unknown) => JSON.stringify(value, null, 2).replaceAll('\n', '\n  ');
const key = (name: string) => (/^\d+$/.test(name) ? name : `'${name}'`);

/**
 * The typed calls of `exchanges` by `document` (the platform's served document: its servers say which
 * hosts are the API's). Every exchange is typed, skipped with a reason, or unmatched.
 */
export function typedCallsSource(document: Json, exchanges: readonly RecordedExchange[], file: string): TypedCallsSource {
  const operations = operationsOf(document);
  const apiOrigins = new Set(operations.map((o) => new URL(o.server).origin));
  // One client per server, named by its discovery field (`{stream_url}` -> stream), as a caller makes them.
  const clients = new Map<string, { name: string; url: string }>();
  const clientOf = (operation: Operation) => {
    const named = /\{(\w+)_url\}/.exec(operation.serverDescription)?.[1] ?? 'host';
    const id = `${named} ${operation.server}`;
    if (!clients.has(id))
      clients.set(id, { name: `${named}${[...clients.values()].some((c) => c.name === named) ? clients.size : ''}`, url: operation.server });
    return clients.get(id)!.name;
  };
  const blocks: { call: string; operation: string; part: 'call' | 'answer'; lines: string[] }[] = [];
  const typed: { exchange: RecordedExchange; operation: Operation }[] = [];
  const skipped: { exchange: RecordedExchange; reason: string }[] = [];
  const unmatched: RecordedExchange[] = [];

  for (const [index, exchange] of exchanges.entries()) {
    const url = new URL(exchange.url);
    if (!apiOrigins.has(url.origin)) {
      skipped.push({ exchange, reason: `${url.origin} is not a host of the document` });
      continue;
    }
    const operation = operationFor(operations, exchange.method, exchange.url);
    if (operation === undefined) {
      unmatched.push(exchange);
      continue;
    }
    let body: unknown;
    if (exchange.requestBody.length > 0) {
      if (!isJson(exchange.requestContentType)) {
        skipped.push({ exchange, reason: `its body is not JSON (${exchange.requestContentType || 'no content type'})` });
        continue;
      }
      try {
        body = JSON.parse(exchange.requestBody.toString('utf8'));
      } catch {
        skipped.push({ exchange, reason: 'its body does not parse as JSON' });
        continue;
      }
    }
    typed.push({ exchange, operation });
    const declared = (operation.operation['parameters'] ?? []) as Json[];
    const schemaOf = (place: string, name: string) => declared.find((p) => p['in'] === place && p['name'] === name)?.['schema'] as Json | undefined;
    const captured = operation.pattern.exec(`${url.origin}${url.pathname}`)!.slice(1);
    const path = Object.fromEntries(
      operation.parameterNames.map((name, i) => [name, parameterLiteral([decodeURIComponent(captured[i]!)], schemaOf('path', name))]),
    );
    // A name the operation does not declare belongs to its free-form object parameter, if it has one
    // (`style: form`, exploded: an action's own parameters); otherwise it stays, for tsc to refuse.
    const open = declared.find((p) => p['in'] === 'query' && p['style'] === 'form' && p['explode'] === true)?.['name'] as string | undefined;
    const query: Record<string, unknown> = {};
    for (const name of new Set(url.searchParams.keys())) {
      const schema = schemaOf('query', name);
      if (schema === undefined && open !== undefined) query[open] = { ...(query[open] as object), [name]: url.searchParams.get(name) };
      else query[name] = parameterLiteral(url.searchParams.getAll(name), schema);
    }
    const params = {
      ...(operation.parameterNames.length > 0 ? { path } : {}),
      ...(Object.keys(query).length > 0 ? { query } : {}),
    };
    const init = { ...(Object.keys(params).length > 0 ? { params } : {}), ...(body === undefined ? {} : { body }) };
    const method = operation.method.toLowerCase();
    const item = `paths['${operation.template}']['${method}']`;
    const from = { call: callLabel(exchange), operation: `${operation.method} ${operation.template}` };
    const call = `${clientOf(operation)}.${operation.method}('${operation.template}', ${literal(init)} satisfies FetchOptions<${item}>)`;
    blocks.push({ ...from, part: 'call', lines: [`// ${from.call}`, `export const call${index} = () =>`, ...`  ${call};`.split('\n')] });
    const mediaType = exchange.contentType.split(';')[0]!.trim();
    if (exchange.body.length === 0 || !isJson(mediaType)) continue;
    const status = responseFor(document, operation.operation, exchange.status)?.key ?? String(exchange.status);
    let answer: unknown;
    try {
      answer = JSON.parse(exchange.body.toString('utf8'));
    } catch {
      blocks.push({ ...from, part: 'answer', lines: [`export const answer${index}: never = 'an answer that does not parse as ${mediaType}';`] });
      continue;
    }
    blocks.push({
      ...from,
      part: 'answer',
      lines: `export const answer${index}: ${item}['responses'][${key(status)}]['content']['${mediaType}'] = ${literal(answer)};`.split('\n'),
    });
  }

  const specifier = (target: string) => {
    const path = relative(dirname(file), target).split('\\').join('/');
    return path.startsWith('.') ? path : `./${path}`;
  };
  const head = [
    '// Generated by test/support/typed-calls.ts from recorded traffic: never committed (it may hold tokens).',
    "import type { FetchOptions } from 'openapi-fetch';",
    `import { createPlatformClient } from '${specifier(clientModule)}';`,
    `import type { paths } from '${specifier(typesModule)}';`,
    '',
    ...[...clients.values()].map(({ name, url }) => `const ${name} = createPlatformClient({ baseUrl: ${JSON.stringify(url)} });`),
    '',
  ];
  const lines = [...head];
  const spans: Span[] = [];
  for (const { lines: own, ...block } of blocks) {
    spans.push({ first: lines.length, last: lines.length + own.length - 1, ...block });
    lines.push(...own, '');
  }
  return { text: lines.join('\n'), file, spans, typed, skipped, unmatched };
}

/**
 * Writes `source` to its file and type-checks it with the repository's compiler settings (the root
 * tsconfig.json's module resolution; strict, `noUncheckedIndexedAccess`): the file's diagnostics,
 * each with the recorded call it came from.
 */
export async function typeErrorsOf(source: TypedCallsSource): Promise<TypeDiagnostic[]> {
  await mkdir(dirname(source.file), { recursive: true });
  await writeFile(source.file, source.text, { mode: 0o600 });
  const config = ts.getParsedCommandLineOfConfigFile(`${repo}tsconfig.json`, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error('cannot read tsconfig.json');
  const options: ts.CompilerOptions = { ...config.options, strict: true, noUncheckedIndexedAccess: true, noEmit: true };
  const program = ts.createProgram([source.file], options);
  const file = program.getSourceFile(source.file);
  if (file === undefined) throw new Error(`${source.file} is not in the program`);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(file),
    ...program.getSemanticDiagnostics(file),
  ];
  return diagnostics.map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const line = diagnostic.file === file && diagnostic.start !== undefined ? file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
    const span = source.spans.find((s) => s.first <= line && line <= s.last);
    const at = line < 0 ? (diagnostic.file?.fileName ?? 'the compiler options') : `${source.file}:${line + 1}`;
    return { call: span?.call ?? null, operation: span?.operation ?? null, part: span?.part ?? null, at, message };
  });
}
