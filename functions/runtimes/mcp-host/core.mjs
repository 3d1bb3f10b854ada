// @ts-check
/**
 * The MCP host's request handling, shared by the local HTTP server (host.mjs) and the Lambda entry
 * (lambda.mjs). Plain ESM JavaScript with JSDoc types: it runs under `node` directly, without a
 * TypeScript loader, so a host starts in a Node start-up plus the SDK's load time and needs no
 * read access beyond this directory and the allowed packages (see ../../adapters/mcp-runtime/local.ts).
 *
 * Loading a source (one file, never written to disk):
 * - CommonJS (`module.exports = { createMcpServer }`) is compiled with `vm.compileFunction` as the
 *   usual module wrapper and gets a `require` that returns only the allowed modules.
 * - ES modules (`export function createMcpServer`) are detected the way Node detects them (the
 *   CommonJS compile fails with an ESM-only syntax error) and compiled as `vm.SourceTextModule`
 *   (needs `--experimental-vm-modules`); every static and dynamic import goes through the same
 *   allowlist at link time. No source rewriting, no temporary files, and a dropped cache entry is
 *   garbage-collected (a `data:` URL module would stay in Node's module map for good).
 * - Allowed: `@modelcontextprotocol/sdk/...`, `zod/...` (both resolved from `modulesFrom`, in their
 *   CommonJS builds for ESM sources too, so every server shares one copy and there is no dual
 *   package hazard) but the SDK subpaths of DENIED_SUBPATHS, and Node's built-in modules except
 *   those that start processes or threads, reach the module loader or the inspector (DENIED_BUILTINS).
 * - The module (its `createMcpServer`) is cached per (serverId, version), LRU-bounded, and checked
 *   against the source's hash. Built servers are kept with it and reused: building one (the SDK
 *   makes an Ajv instance per server) cost more than answering a `tools/call`. A stateless transport
 *   serves one request, so each request gets a fresh transport on an idle server, one request per
 *   server at a time (concurrent requests get servers of their own). Reuse stays within one set of
 *   keys (`env`): a server that read `process.env` while it was built never serves a request with
 *   other keys (another caller's role token, a rotated key). What the SDK remembers of a connection
 *   (the client's info and capabilities from `initialize`, the log level) is cleared before a server
 *   is reused; a server that timed out or was cancelled is never reused. What a source keeps in its
 *   own variables is the source's, as module-level state always was.
 *
 * Environment: `process.env` is replaced by a view that, inside a request, shows the host's own
 * (clean) environment plus that request's `env` (the owner's keys); writes stay within the request.
 * The request's async context (AsyncLocalStorage) selects the view, so concurrent requests with
 * different key sets never see each other's values.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import vm from 'node:vm';

/** Built-in modules a server may not load: processes, threads, the module loader, the inspector, V8 flags. */
export const DENIED_BUILTINS = Object.freeze([
  'child_process',
  'cluster',
  'worker_threads',
  'module',
  'vm',
  'inspector',
  'inspector/promises',
  'v8',
  'repl',
  'wasi',
  'trace_events',
]);

/**
 * The packages a server may load, and the subpaths of them it may not (allowed-modules.json, which
 * the MCP runtime function's layer is also built from: lib/cloud/mcp-runtime-function.ts ships only
 * what the allowed subpaths reach, so a file left out of the layer is one no server can load here
 * either). Refused: the SDK's server transports other than the web-standard one and its Express
 * and OAuth-server parts (the host is every server's transport, and the platform authenticates
 * callers), its stdio client (it starts processes) and its examples.
 * @type {{ packages: string[], deniedSubpaths: Record<string, string[]> }}
 */
const ALLOWED_MODULES = JSON.parse(readFileSync(new URL('./allowed-modules.json', import.meta.url), 'utf8'));

/** Packages a server may load, with their subpaths but those of DENIED_SUBPATHS. */
export const ALLOWED_PACKAGES = Object.freeze([...ALLOWED_MODULES.packages]);

/** Subpaths of an allowed package a server may not load: a file, or every file under a `dir/`. */
export const DENIED_SUBPATHS = Object.freeze(ALLOWED_MODULES.deniedSubpaths);

const DEFAULT_TIMEOUT_MS = 30_000;
/** Idle built servers kept per (serverId, version), whatever their keys: the concurrency worth serving warm. */
const MAX_IDLE_SERVERS = 8;
const DEFAULT_MAX_MODULES = 50;
/** Pages of `tools/list` followed by inspect (a server that keeps returning cursors is cut off). */
const MAX_TOOL_PAGES = 100;
/** JSON-RPC error codes as the SDK names them (ErrorCode in types.js). */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;
const INTERNAL_ERROR = -32603;

/** Syntax errors that mean "this is an ES module" when a source is compiled as CommonJS. */
const ESM_ONLY_SYNTAX = [
  'Cannot use import statement outside a module',
  "Unexpected token 'export'",
  "Cannot use 'import.meta' outside a module",
  'await is only valid in async functions and the top level bodies of modules',
];

/** A source that cannot be loaded or built; its message is shown to the server's owner. */
export class LoadError extends Error {}

/**
 * @typedef {{ serverId: string, version: number, sourceCode: string }} Source
 * @typedef {{ method: string, headers: Record<string, string>, body: string }} HttpRequest
 * @typedef {{ status: number, headers: Record<string, string>, body: string }} HttpResponse
 * @typedef {{ ok: true, tools: string[] } | { ok: false, error: string }} Inspection
 * @typedef {{ connect(transport: unknown): Promise<void>, close(): Promise<void> }} ServerLike
 * @typedef {() => ServerLike | Promise<ServerLike>} Factory
 * @typedef {{ envKey: string, server: ServerLike }} IdleServer
 * @typedef {{ hash: string, factory: Promise<Factory>, idle: IdleServer[] }} CacheEntry
 */

/**
 * @param {{
 *   modulesFrom: string,
 *   maxModules?: number,
 *   defaultTimeoutMs?: number,
 *   log?: (message: string, fields?: Record<string, unknown>) => void,
 * }} options `modulesFrom`: a directory (or file URL) from which the allowed packages resolve.
 */
export function createHost(options) {
  const maxModules = options.maxModules ?? DEFAULT_MAX_MODULES;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const log = options.log ?? (() => {});
  const from = options.modulesFrom.startsWith('file:') || options.modulesFrom.endsWith('/') ? options.modulesFrom : `${options.modulesFrom}/`;
  const platformRequire = createRequire(from);
  /** @type {typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')} */
  const transportModule = platformRequire('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js');
  // Warm the modules servers load first, so the first request does not pay for them.
  platformRequire('@modelcontextprotocol/sdk/server/mcp.js');
  platformRequire('zod');

  const envScope = installEnvironmentView();
  /** @type {Map<string, CacheEntry>} */
  const modules = new Map();
  /** @type {Map<string, Promise<vm.Module>>} */
  const syntheticModules = new Map();
  let active = 0;

  /**
   * An allowed module's CommonJS exports; a LoadError naming the module otherwise (also when an
   * allowed package has no such subpath, without the platform's install path).
   * @param {string} specifier
   */
  function requireAllowed(specifier) {
    const id = allowedId(specifier);
    try {
      return platformRequire(id);
    } catch (error) {
      const code = /** @type {{ code?: unknown }} */ (error).code;
      if (code === 'MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
        throw new LoadError(
          `module '${specifier}' was not found (subpaths of @modelcontextprotocol/sdk end in .js, e.g. '@modelcontextprotocol/sdk/server/mcp.js')`,
        );
      }
      throw error;
    }
  }
  restrictGetBuiltinModule();

  /**
   * The allowed module behind `specifier` as an evaluated module for ESM sources: its CommonJS
   * exports as named exports, and `default` as an ES build would have it.
   * @param {string} specifier
   * @returns {Promise<vm.Module>}
   */
  function syntheticModule(specifier) {
    const id = allowedId(specifier);
    let module = syntheticModules.get(id);
    if (!module) {
      module = (async () => {
        const value = requireAllowed(specifier);
        const names =
          value !== null && (typeof value === 'object' || typeof value === 'function')
            ? Object.keys(value).filter((n) => n !== 'default' && n !== '__esModule')
            : [];
        const defaultExport = value?.__esModule && 'default' in value ? value.default : value;
        const synthetic = new vm.SyntheticModule(
          [...names, 'default'],
          function () {
            for (const name of names) this.setExport(name, value[name]);
            this.setExport('default', defaultExport);
          },
          { identifier: id },
        );
        await synthetic.link(() => {
          throw new Error('unreachable');
        });
        await synthetic.evaluate();
        return synthetic;
      })();
      module.catch(() => syntheticModules.delete(id));
      syntheticModules.set(id, module);
    }
    return module;
  }

  /** @param {string} specifier */
  async function importDynamically(specifier) {
    if (typeof vm.SyntheticModule !== 'function')
      throw new LoadError(`import('${specifier}') needs Node to run with --experimental-vm-modules; use require() instead`);
    return syntheticModule(specifier);
  }

  /**
   * Compiles and evaluates a source; resolves with its `createMcpServer`.
   * @param {Source} source
   * @returns {Promise<Factory>}
   */
  async function loadFactory(source) {
    const filename = filenameOf(source);
    /** @type {any} */
    let exported;
    let compiled;
    try {
      compiled = vm.compileFunction(source.sourceCode, ['exports', 'require', 'module', '__filename', '__dirname'], {
        filename,
        importModuleDynamically: importDynamically,
      });
    } catch (error) {
      if (!(error instanceof SyntaxError) || !ESM_ONLY_SYNTAX.some((text) => error.message.includes(text))) throw new LoadError(describeError(error, filename));
    }
    if (compiled) {
      const module = { exports: {} };
      try {
        compiled.call(module.exports, module.exports, requireAllowed, module, `/${filename}`, '/');
      } catch (error) {
        throw new LoadError(describeError(error, filename));
      }
      exported = module.exports;
    } else {
      exported = await evaluateModule(source.sourceCode, filename);
    }
    const factory = typeof exported?.createMcpServer === 'function' ? exported.createMcpServer : exported?.default?.createMcpServer;
    if (typeof factory !== 'function') {
      const names = exported && typeof exported === 'object' ? Object.keys(exported) : [];
      throw new LoadError(`the source does not export a createMcpServer function${names.length > 0 ? ` (it exports: ${names.slice(0, 10).join(', ')})` : ''}`);
    }
    return /** @type {Factory} */ (factory);
  }

  /**
   * @param {string} code
   * @param {string} filename
   */
  async function evaluateModule(code, filename) {
    if (typeof vm.SourceTextModule !== 'function') {
      throw new LoadError('ES module sources need Node to run with --experimental-vm-modules (use module.exports for CommonJS instead)');
    }
    let module;
    try {
      module = new vm.SourceTextModule(code, {
        identifier: filename,
        initializeImportMeta(meta) {
          meta.url = `file:///${filename}`;
        },
        importModuleDynamically: importDynamically,
      });
      await module.link((specifier) => syntheticModule(specifier));
      await module.evaluate();
    } catch (error) {
      throw new LoadError(describeError(error, filename));
    }
    return module.namespace;
  }

  /**
   * The cache entry of a source: its factory, loaded once however many requests wait for it, and
   * its idle built servers.
   * @param {Source} source
   * @returns {CacheEntry}
   */
  function entryOf(source) {
    const key = `${source.serverId}@${source.version}`;
    const hash = createHash('sha256').update(source.sourceCode).digest('base64');
    const cached = modules.get(key);
    if (cached && cached.hash === hash) {
      modules.delete(key);
      modules.set(key, cached);
      return cached;
    }
    /** @type {CacheEntry} */
    const entry = { hash, factory: loadFactory(source), idle: [] };
    // A failed load is not kept: the next request tries again (the failure may depend on env).
    entry.factory.catch(() => {
      if (modules.get(key) === entry) modules.delete(key);
    });
    modules.set(key, entry);
    while (modules.size > maxModules) {
      const oldest = modules.keys().next().value;
      if (oldest === undefined) break;
      modules.delete(oldest);
    }
    return entry;
  }

  /**
   * An idle server of `entry` built with the same keys, or a new one.
   * @param {Source} source
   * @param {CacheEntry} entry
   * @param {string} envKey
   * @returns {Promise<ServerLike>}
   */
  async function serverFor(source, entry, envKey) {
    const at = entry.idle.findIndex((idle) => idle.envKey === envKey);
    const [idle] = at >= 0 ? entry.idle.splice(at, 1) : [];
    if (idle) return idle.server;
    const factory = await entry.factory;
    /** @type {ServerLike} */
    let server;
    try {
      server = await factory();
    } catch (error) {
      throw new LoadError(`createMcpServer() failed: ${describeError(error, filenameOf(source))}`);
    }
    if (server === null || typeof server !== 'object' || typeof server.connect !== 'function') {
      throw new LoadError(`createMcpServer() must return an McpServer of @modelcontextprotocol/sdk (it returned ${describeValue(server)})`);
    }
    return server;
  }

  /**
   * Puts a server whose exchange finished back among `entry`'s idle ones, once closed and cleared
   * of what the SDK kept of the connection; a server of another shape is dropped.
   * @param {CacheEntry} entry
   * @param {string} envKey
   * @param {ServerLike} server
   */
  async function keepIdle(entry, envKey, server) {
    await server.close();
    if (!forgetConnection(server)) return;
    entry.idle.push({ envKey, server });
    // The oldest idle server goes first.
    while (entry.idle.length > MAX_IDLE_SERVERS) entry.idle.shift();
  }

  /**
   * Serves one HTTP exchange on a fresh stateless transport, on an idle server of the source built
   * with the same keys or a new one; the server is closed after it, and kept for the next request
   * unless the exchange was cut short.
   * @param {Source} source
   * @param {CacheEntry} entry
   * @param {Record<string, string>} env
   * @param {HttpRequest} request
   * @param {{ closeOnAbort: (close: () => void) => void }} lifetime
   * @returns {Promise<HttpResponse>}
   */
  async function exchange(source, entry, env, request, lifetime) {
    const envKey = digestOf(env);
    const server = await serverFor(source, entry, envKey);
    const transport = new transportModule.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    let abandoned = false;
    const close = () => {
      Promise.resolve()
        .then(() => (typeof server.close === 'function' ? server.close() : transport.close()))
        .catch(() => {});
    };
    lifetime.closeOnAbort(() => {
      abandoned = true;
      close();
    });
    let answered = false;
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(
        new Request('http://mcp.invalid/mcp', {
          method: request.method,
          headers: request.headers,
          ...(request.method === 'POST' ? { body: request.body } : {}),
        }),
      );
      const body = await response.text();
      /** @type {Record<string, string>} */
      const headers = {};
      response.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value;
      });
      answered = true;
      return { status: response.status, headers, body };
    } finally {
      // A server cut short may still be running a handler: it is closed and never reused.
      // Closed after the answer has gone, not before it.
      if (answered && !abandoned) void keepIdle(entry, envKey, server).catch(close);
      else close();
    }
  }

  /**
   * Runs `work` inside the request's environment with a deadline; `onTimeout` answers if it is missed.
   * @template T
   * @param {Record<string, string>} env
   * @param {number} timeoutMs
   * @param {AbortSignal | undefined} signal
   * @param {(lifetime: { closeOnAbort: (close: () => void) => void }) => Promise<T>} work
   * @param {() => T} onTimeout
   * @param {() => T} onAbort
   * @returns {Promise<T>}
   */
  function withDeadline(env, timeoutMs, signal, work, onTimeout, onAbort) {
    /** @type {Array<() => void>} */
    const closers = [];
    const lifetime = { closeOnAbort: (/** @type {() => void} */ close) => void closers.push(close) };
    active++;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (/** @type {() => void} */ settle) => {
        if (settled) return;
        settled = true;
        active--;
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        settle();
      };
      const abandon = (/** @type {() => T} */ answer) => {
        for (const close of closers) close();
        finish(() => resolve(answer()));
      };
      const timer = setTimeout(() => abandon(onTimeout), timeoutMs);
      const aborted = () => abandon(onAbort);
      if (signal?.aborted) return abandon(onAbort);
      signal?.addEventListener('abort', aborted, { once: true });
      envScope
        .run(env, () => work(lifetime))
        .then(
          (value) => finish(() => resolve(value)),
          (error) => finish(() => reject(error)),
        );
    });
  }

  /**
   * Loads a source, builds its server and lists its tools through the same path as `handle`.
   * @param {Source & { timeoutMs?: number }} input
   * @param {AbortSignal} [signal]
   * @returns {Promise<Inspection>}
   */
  async function inspect(input, signal) {
    const source = validSource(input);
    if ('error' in source) return { ok: false, error: source.error };
    const timeoutMs = validTimeout(input.timeoutMs, defaultTimeoutMs);
    try {
      return await withDeadline(
        {},
        timeoutMs,
        signal,
        async (lifetime) => {
          const entry = entryOf(source);
          await entry.factory;
          /** @type {string[]} */
          const tools = [];
          /** @type {unknown} */
          let cursor;
          for (let page = 0; page < MAX_TOOL_PAGES; page++) {
            const body = JSON.stringify({ jsonrpc: '2.0', id: page + 1, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) });
            const response = await exchange(source, entry, {}, { method: 'POST', headers: MCP_REQUEST_HEADERS, body }, lifetime);
            const listed = toolsPage(response);
            if ('error' in listed) return { ok: false, error: listed.error };
            tools.push(...listed.tools);
            cursor = listed.nextCursor;
            if (cursor === undefined) break;
          }
          return /** @type {Inspection} */ ({ ok: true, tools });
        },
        () => /** @type {Inspection} */ ({ ok: false, error: `loading the server and listing its tools did not finish within ${timeoutMs} ms` }),
        () => /** @type {Inspection} */ ({ ok: false, error: 'the inspection was cancelled' }),
      );
    } catch (error) {
      if (error instanceof LoadError) return { ok: false, error: error.message };
      log('inspect failed', { serverId: source.serverId, version: source.version, error: describeError(error, null) });
      return { ok: false, error: describeError(error, null) };
    }
  }

  /**
   * Handles one MCP HTTP request against a source. Never throws: failures are JSON-RPC errors.
   * @param {Source & { request: HttpRequest, env?: Record<string, string>, timeoutMs?: number }} input
   * @param {AbortSignal} [signal]
   * @returns {Promise<HttpResponse>}
   */
  async function handle(input, signal) {
    const request = validRequest(input?.request);
    if ('error' in request) return jsonRpcError(400, null, INTERNAL_ERROR, request.error, 'INVALID_PARAMETERS');
    const id = jsonRpcIdOf(request.body);
    const source = validSource(input);
    if ('error' in source) return jsonRpcError(400, id, INTERNAL_ERROR, source.error, 'INVALID_PARAMETERS');
    // Stateless JSON mode: no standalone SSE stream (GET) and no session to end (DELETE). The
    // official client takes 405 on GET as "no server-initiated messages".
    if (request.method !== 'POST')
      return {
        ...jsonRpcError(405, id, CONNECTION_CLOSED, 'Method not allowed: this MCP server is stateless; send JSON-RPC messages with POST', 'METHOD_NOT_ALLOWED'),
        headers: { 'content-type': 'application/json', allow: 'POST' },
      };
    const env = validEnv(input.env);
    const timeoutMs = validTimeout(input.timeoutMs, defaultTimeoutMs);
    try {
      return await withDeadline(
        env,
        timeoutMs,
        signal,
        async (lifetime) => exchange(source, entryOf(source), env, request, lifetime),
        () => jsonRpcError(504, id, REQUEST_TIMEOUT, `the MCP server did not answer within ${timeoutMs} ms`, 'TIMEOUT'),
        () => jsonRpcError(499, id, CONNECTION_CLOSED, 'the request was cancelled', 'REQUEST_CANCELLED'),
      );
    } catch (error) {
      if (error instanceof LoadError)
        return jsonRpcError(500, id, INTERNAL_ERROR, `the MCP server could not be loaded: ${error.message}`, 'MCP_SERVER_LOAD_FAILED');
      log('handle failed', { serverId: source.serverId, version: source.version, error: describeError(error, null) });
      return jsonRpcError(500, id, INTERNAL_ERROR, `the MCP server failed: ${describeError(error, null)}`, 'MCP_SERVER_FAILED');
    }
  }

  return {
    inspect,
    handle,
    stats: () => ({ active, modules: modules.size }),
  };

  /** Routes `process.getBuiltinModule` (Node 20.16+) through the same allowlist as `require`. */
  function restrictGetBuiltinModule() {
    if (typeof process.getBuiltinModule !== 'function') return;
    const original = process.getBuiltinModule.bind(process);
    process.getBuiltinModule = /** @type {typeof process.getBuiltinModule} */ (
      (/** @type {string} */ id) => {
        if (!isBuiltinSpecifier(id)) return undefined;
        return original(allowedId(id));
      }
    );
  }
}

/**
 * Clears what an SDK server keeps of its last connection, so the next request (maybe another
 * caller's) starts as on a new server: the client's info and capabilities from `initialize`, and
 * the log level set with `logging/setLevel`. False when `server` is not an SDK server of the shape
 * this knows (an McpServer or a low-level Server): it is then not reused.
 * @param {ServerLike} server
 */
export function forgetConnection(server) {
  /** @type {any} */
  const any = server;
  const protocol = any.server !== null && typeof any.server === 'object' ? any.server : any;
  if (!(protocol._loggingLevels instanceof Map) || typeof protocol.getClientVersion !== 'function' || protocol._transport !== undefined) return false;
  protocol._clientCapabilities = undefined;
  protocol._clientVersion = undefined;
  protocol._loggingLevels.clear();
  return true;
}

/**
 * A digest of a request's environment, so servers are reused only under the same keys.
 * @param {Record<string, string>} env
 */
function digestOf(env) {
  const hash = createHash('sha256');
  for (const name of Object.keys(env).sort()) hash.update(`${name}\0${env[name]}\0`);
  return hash.digest('base64');
}

/**
 * The name a source's code runs under (in stacks and error locations).
 * @param {Source} source
 */
function filenameOf(source) {
  return `${source.serverId}@${source.version}.js`;
}

const MCP_REQUEST_HEADERS = Object.freeze({ accept: 'application/json, text/event-stream', 'content-type': 'application/json' });

/**
 * The id `require` should load for a specifier, or a LoadError naming the module.
 * @param {string} specifier
 */
export function allowedId(specifier) {
  if (typeof specifier !== 'string' || specifier === '') throw new LoadError('a module specifier must be a non-empty string');
  if (isBuiltinSpecifier(specifier)) {
    const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
    if (DENIED_BUILTINS.includes(name))
      throw new LoadError(`module '${specifier}' is not available to MCP servers (they may not start processes or threads or load modules themselves)`);
    return `node:${name}`;
  }
  const name = ALLOWED_PACKAGES.find((candidate) => specifier === candidate || specifier.startsWith(`${candidate}/`));
  if (name !== undefined) {
    if (isDeniedSubpath(name, specifier.slice(name.length + 1)))
      throw new LoadError(
        `module '${specifier}' is not available to MCP servers: the host serves every server itself, so the SDK's other server transports, its Express and OAuth server parts, its stdio client (it starts processes) and its examples are left out`,
      );
    return specifier;
  }
  throw new LoadError(
    `module '${specifier}' is not available to MCP servers: a server is one file and may use only ${ALLOWED_PACKAGES.join(', ')} and Node's built-in modules`,
  );
}

/**
 * Whether `subpath` of package `name` is refused. Empty segments are dropped first: Node refuses
 * them in package exports anyway, but `a//b` must not slip past a `a/b` entry.
 * @param {string} name
 * @param {string} subpath
 */
function isDeniedSubpath(name, subpath) {
  const normalized = subpath
    .split('/')
    .filter((segment) => segment !== '')
    .join('/');
  return (DENIED_SUBPATHS[name] ?? []).some((denied) => (denied.endsWith('/') ? `${normalized}/`.startsWith(denied) : normalized === denied));
}

/** @param {string} specifier */
function isBuiltinSpecifier(specifier) {
  const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  return builtinModules.includes(name) || specifier.startsWith('node:');
}

/**
 * Replaces `process.env` with a view scoped by an AsyncLocalStorage: outside a request it is the
 * process's own environment; inside one, a copy of that environment plus the request's variables.
 */
function installEnvironmentView() {
  /** @type {AsyncLocalStorage<Record<string, string | undefined>>} */
  const storage = new AsyncLocalStorage();
  const base = process.env;
  const current = () => storage.getStore() ?? base;
  const view = new Proxy(base, {
    get: (_target, name) => (typeof name === 'string' ? current()[name] : undefined),
    set: (_target, name, value) => {
      if (typeof name === 'string') current()[name] = String(value);
      return true;
    },
    has: (_target, name) => typeof name === 'string' && Object.hasOwn(current(), name),
    deleteProperty: (_target, name) => {
      if (typeof name === 'string') delete current()[name];
      return true;
    },
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, name) => {
      const env = current();
      if (typeof name !== 'string' || !Object.hasOwn(env, name)) return undefined;
      return { value: env[name], writable: true, enumerable: true, configurable: true };
    },
    defineProperty: (_target, name, descriptor) => {
      if (typeof name === 'string' && 'value' in descriptor) current()[name] = String(descriptor.value);
      return true;
    },
  });
  process.env = view;
  return {
    /**
     * @template T
     * @param {Record<string, string>} env
     * @param {() => T} fn
     */
    run: (env, fn) => storage.run({ ...base, ...env }, fn),
  };
}

/**
 * One `tools/list` answer: the names and the next cursor, or the error to report.
 * @param {HttpResponse} response
 * @returns {{ tools: string[], nextCursor: unknown } | { error: string }}
 */
function toolsPage(response) {
  /** @type {any} */
  let parsed;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    return { error: `tools/list answered with status ${response.status} and a body that is not JSON` };
  }
  if (parsed?.error) return { error: `tools/list failed: ${String(parsed.error.message ?? JSON.stringify(parsed.error))}` };
  const tools = parsed?.result?.tools;
  if (!Array.isArray(tools)) return { error: `tools/list answered with status ${response.status} and no tool list` };
  const cursor = parsed.result.nextCursor;
  return { tools: tools.map((tool) => String(tool?.name)), nextCursor: typeof cursor === 'string' && cursor !== '' ? cursor : undefined };
}

/**
 * A JSON-RPC error answer with an HTTP status.
 * @param {number} status
 * @param {unknown} id
 * @param {number} code
 * @param {string} message
 * @param {string} platformCode the platform's code for the condition (`error.data.code`, as on the platform's own JSON-RPC errors)
 * @returns {HttpResponse}
 */
export function jsonRpcError(status, id, code, message, platformCode) {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message, data: { code: platformCode } } }),
  };
}

/**
 * The id of a single JSON-RPC request body (null for batches, notifications or unparsable bodies).
 * @param {string} body
 */
export function jsonRpcIdOf(body) {
  try {
    const parsed = JSON.parse(body);
    const id = parsed?.id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

/**
 * A short, owner-facing description of an error: name, message and where in the source it happened.
 * @param {unknown} error
 * @param {string | null} filename
 */
export function describeError(error, filename) {
  if (!(error instanceof Error)) return String(error);
  const code = /** @type {{ code?: unknown }} */ (error).code;
  let text = error instanceof LoadError ? error.message : `${error.name}: ${error.message}`;
  if (code === 'ERR_ACCESS_DENIED') {
    const { permission, resource } = /** @type {{ permission?: string, resource?: string }} */ (error);
    text = `${error.name}: access denied: MCP servers may not use ${permission ?? 'this API'}${resource ? ` (${resource})` : ''}`;
  }
  const where = filename === null ? null : locationIn(error.stack ?? '', filename);
  return where ? `${text} (${where})` : text;
}

/**
 * The first `file:line` of `filename` in a stack: V8 puts a syntax error's location on the first
 * line, and a runtime error's in an `at` frame.
 * @param {string} stack
 * @param {string} filename
 */
function locationIn(stack, filename) {
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}:(\\d+)`).exec(stack);
  return match ? `line ${match[1]}` : null;
}

/** @param {unknown} value */
function describeValue(value) {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object without connect()`;
  return typeof value;
}

/**
 * @param {any} input
 * @returns {Source | { error: string }}
 */
function validSource(input) {
  const { serverId, version, sourceCode } = input ?? {};
  if (typeof serverId !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(serverId))
    return { error: 'serverId must be a string of letters, digits, ".", "_" or "-"' };
  if (!Number.isSafeInteger(version) || version < 0) return { error: 'version must be a non-negative integer' };
  if (typeof sourceCode !== 'string') return { error: 'sourceCode must be a string' };
  return { serverId, version, sourceCode };
}

/**
 * @param {any} request
 * @returns {HttpRequest | { error: string }}
 */
function validRequest(request) {
  if (request === null || typeof request !== 'object') return { error: 'request must be an object {method, headers, body}' };
  const { method, headers, body } = request;
  if (typeof method !== 'string') return { error: 'request.method must be a string' };
  if (typeof body !== 'string') return { error: 'request.body must be a string' };
  /** @type {Record<string, string>} */
  const flat = {};
  if (headers !== null && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') flat[name.toLowerCase()] = value;
  }
  return { method: method.toUpperCase(), headers: flat, body };
}

/**
 * @param {unknown} env
 * @returns {Record<string, string>}
 */
function validEnv(env) {
  /** @type {Record<string, string>} */
  const out = {};
  if (env === null || typeof env !== 'object') return out;
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) out[name] = value;
  return out;
}

/**
 * @param {unknown} value
 * @param {number} fallback
 */
function validTimeout(value, fallback) {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(value, 15 * 60_000) : fallback;
}
