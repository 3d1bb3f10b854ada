import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, LayerVersion, Runtime, TenancyConfig } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import * as z from 'zod';
import { REPO_ROOT } from './function-entries.ts';
import { locallyStagedCode } from './local-asset.ts';

/** The MCP host (core.mjs, and lambda.mjs as the Lambda entry), shipped as the function's code. */
export const DEFAULT_MCP_HOST_DIR = join(REPO_ROOT, 'functions', 'runtimes', 'mcp-host');

/** The layer's package.json: its `dependencies` name the packages user MCP servers may load. */
export const DEFAULT_MCP_LAYER_DIR = join(REPO_ROOT, 'layers', 'mcp-node');

/** The installed packages the layer is copied from (the root install; nothing is downloaded at synth). */
export const DEFAULT_MCP_MODULES_DIR = join(REPO_ROOT, 'node_modules');

/** `lambda.mjs`, export `handler`. */
export const MCP_HOST_HANDLER = 'lambda.handler';

/**
 * ES module sources are compiled as `vm.SourceTextModule`, which needs this flag (mcp-host/lambda.mjs);
 * CommonJS sources would work without it.
 */
export const MCP_RUNTIME_NODE_OPTIONS = '--experimental-vm-modules';

/** The MCP endpoint routes' own time limit (lib/manifest/routes.ts): a longer run is answered 504 anyway. */
export const DEFAULT_MCP_RUNTIME_TIMEOUT_SEC = 120;

export interface McpRuntimeFunctionProps {
  /**
   * Memory of every execution environment, in MB; CPU scales with it. An environment serves one
   * owner's servers, one request at a time, and keeps the loaded ones warm (the host bounds how
   * many). From 128 to 10240.
   * @default 1024
   */
  readonly memorySize?: number;
  /**
   * Longest invocation. The host keeps a second back from Lambda's deadline to answer 504 itself, and
   * the invoking function outlives the route by a margin (functionTimeoutSec).
   * @default DEFAULT_MCP_RUNTIME_TIMEOUT_SEC seconds
   */
  readonly timeout?: Duration;
  /** Directory of the MCP host code (`lambda.mjs`, `core.mjs`). @default DEFAULT_MCP_HOST_DIR */
  readonly hostDir?: string;
  /** Directory whose package.json `dependencies` the layer holds. @default DEFAULT_MCP_LAYER_DIR */
  readonly layerDir?: string;
  /** The `node_modules` directory the layer's packages are copied from. @default DEFAULT_MCP_MODULES_DIR */
  readonly modulesDir?: string;
}

/**
 * The Lambda that runs users' MCP servers: the Node MCP host (`functions/runtimes/mcp-host/`,
 * handler `lambda.handler`) on Node 22, arm64, invoked synchronously by the platform functions that
 * serve the MCP routes (functions/adapters/mcp-runtime/aws.ts).
 *
 * Tenant isolation mode (PER_TENANT), as the Python runtime: every invoke carries the server owner's
 * user id as tenant id, and Lambda never reuses an execution environment across tenants, so one
 * user's server can never see another's process, memory or /tmp. Such a function can have no
 * function URL; only the functions granted Invoke reach it.
 *
 * The modules servers may load (`@modelcontextprotocol/sdk`, `zod`) come from a layer
 * (`/opt/nodejs/node_modules`, on Lambda's NODE_PATH) built at synth time from the repository's
 * installed packages, without a network: only the files the host lets servers reach
 * (stageMcpLayerAsset).
 *
 * Its role can write its own logs and nothing else: user code runs here, and lambda.mjs also removes
 * the role's credentials from the environment before any of it loads.
 */
export class McpRuntimeFunction extends Construct implements IGrantable {
  readonly function: LambdaFunction;
  readonly layer: LayerVersion;
  readonly role: Role;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: McpRuntimeFunctionProps = {}) {
    super(scope, id);
    const hostDir = props.hostDir ?? DEFAULT_MCP_HOST_DIR;
    const layerDir = props.layerDir ?? DEFAULT_MCP_LAYER_DIR;
    const modulesDir = props.modulesDir ?? DEFAULT_MCP_MODULES_DIR;
    const memorySize = props.memorySize ?? 1024;
    // Lambda's bounds, checked at synth rather than by CloudFormation in the middle of a deploy.
    if (!Number.isInteger(memorySize) || memorySize < 128 || memorySize > 10240)
      throw new Error(`Invalid MCP runtime memory ${memorySize}: use a whole number of MB from 128 to 10240.`);

    this.logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH });
    // Created here rather than by the function, which would attach AWSLambdaBasicExecutionRole
    // (logs in any group of the account).
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Agent platform MCP runtime: its own logs only',
    });
    this.logGroup.grantWrite(this.role);

    this.layer = new LayerVersion(this, 'Modules', {
      description: 'Agent platform MCP runtime: the modules user MCP servers may load (layers/mcp-node)',
      // Plain JavaScript: no native code, so either architecture.
      compatibleRuntimes: [Runtime.NODEJS_22_X],
      compatibleArchitectures: [Architecture.ARM_64, Architecture.X86_64],
      // A change in the installed packages deploys a new layer version.
      code: locallyStagedCode(layerDir, Runtime.NODEJS_22_X, (outputDir) =>
        stageMcpLayerAsset(outputDir, { layerDir, modulesDir, allowedModules: readAllowedModules(hostDir) }),
      ),
    });

    this.function = new LambdaFunction(this, 'Function', {
      description: 'Agent platform MCP runtime: runs user MCP servers (Node)',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      handler: MCP_HOST_HANDLER,
      code: locallyStagedCode(hostDir, Runtime.NODEJS_22_X, (outputDir) => stageMcpHostAsset(hostDir, outputDir)),
      layers: [this.layer],
      role: this.role,
      logGroup: this.logGroup,
      memorySize,
      timeout: props.timeout ?? Duration.seconds(DEFAULT_MCP_RUNTIME_TIMEOUT_SEC),
      tenancyConfig: TenancyConfig.PER_TENANT,
      environment: { NODE_OPTIONS: MCP_RUNTIME_NODE_OPTIONS },
    });
  }

  get grantPrincipal(): IPrincipal {
    return this.role;
  }
}

/**
 * Writes the function's code into `outputDir`: every file of the host directory (plain ESM, no
 * build) but its tsconfig, which only type-checks the files and has no business in the function.
 */
export function stageMcpHostAsset(hostDir: string, outputDir: string): void {
  copyTree(hostDir, outputDir, (path) => path !== 'tsconfig.json');
}

export interface McpLayerSources {
  /** Directory whose package.json `dependencies` name the layer's packages. */
  readonly layerDir: string;
  /** The installed `node_modules` they and their dependencies are copied from. */
  readonly modulesDir: string;
  /** What the host lets servers load (its allowed-modules.json). @default that of DEFAULT_MCP_HOST_DIR */
  readonly allowedModules?: AllowedModules;
}

/** The host's allowed-modules.json: the packages servers may load, and the subpaths of them refused. */
const AllowedModulesSchema = z.object({
  packages: z.array(z.string().min(1)).min(1),
  /** By package: a subpath (`client/stdio.js`) or a folder of them (`examples/`). */
  deniedSubpaths: z.record(z.string(), z.array(z.string().min(1))),
});
export type AllowedModules = Readonly<z.infer<typeof AllowedModulesSchema>>;

/** Reads the host's allowed-modules.json; a malformed one fails the synth naming the file, not later in a server. */
export function readAllowedModules(hostDir: string = DEFAULT_MCP_HOST_DIR): AllowedModules {
  const file = join(hostDir, 'allowed-modules.json');
  const parsed = AllowedModulesSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a list of allowed modules: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** One installed package of the layer: its place under node_modules, its name and version. */
export interface LayerPackage {
  /** Directory relative to the node_modules root, `/`-separated (`express/node_modules/depd`). */
  readonly path: string;
  readonly name: string;
  readonly version: string;
}

const LICENSE_FILE = /^(licen[cs]e|notice|copying)/i;

/** What Node's `require` loads as a module: a subpath to anything else (a `.d.ts`, a map) is no module. */
const MODULE_FILE = /\.(c?js|mjs|json)$/;

/**
 * Writes the layer's content into `outputDir`: `nodejs/node_modules/` holding, in the installed
 * nested layout (so Node resolves each `require` to the same copy as in the repository), the files
 * a server can load through the host: every subpath of the allowed packages that their `exports`
 * offer and the host does not refuse (`AllowedModules`), and every file those reach by `require`
 * and `import`, as esbuild resolves them with the conditions Node's `require` uses; each package's
 * package.json (Node reads `exports`, `main` and `type` there) and license. Unreached files are
 * left out: the ES module builds the host never loads, TypeScript sources and types, and the
 * packages only refused subpaths use (Express and its tree, Hono, cross-spawn). Nothing is installed
 * or downloaded. Returns the packages staged.
 */
export function stageMcpLayerAsset(outputDir: string, sources: McpLayerSources): LayerPackage[] {
  const modulesDir = realpathSync(sources.modulesDir);
  const { packages, missingOptional } = resolveLayerTree(sources);
  const allowed = sources.allowedModules ?? readAllowedModules();
  const entries = [...new Set(layerEntries(modulesDir, sources.layerDir, allowed).map((entry) => entry.file))];
  const reached = traceLayerFiles(modulesDir, entries, missingOptional);
  // Longest first, so a nested package (`a/node_modules/c`) owns its files rather than `a`.
  const owners = [...packages].sort((a, b) => b.path.length - a.path.length);
  const filesByPackage = new Map<LayerPackage, Set<string>>();
  for (const file of reached) {
    const owner = owners.find((pkg) => file.startsWith(`${pkg.path}/`));
    if (owner === undefined) throw new Error(`The MCP layer cannot be built: ${file} is reached but belongs to no package of the layer.`);
    const files = filesByPackage.get(owner) ?? new Set<string>();
    files.add(file);
    // Every package.json between the package and the file: a nested one sets `type` (the SDK's
    // dist/cjs/package.json makes its .js files CommonJS).
    for (let dir = dirname(file); dir.length > owner.path.length; dir = dirname(dir)) {
      if (existsSync(join(modulesDir, dir, 'package.json'))) files.add(`${dir}/package.json`);
    }
    filesByPackage.set(owner, files);
  }
  const target = join(outputDir, 'nodejs', 'node_modules');
  const staged: LayerPackage[] = [];
  for (const pkg of packages) {
    const files = filesByPackage.get(pkg);
    if (files === undefined) continue;
    files.add(`${pkg.path}/package.json`);
    for (const entry of readdirSync(join(modulesDir, pkg.path), { withFileTypes: true }))
      if (LICENSE_FILE.test(entry.name) && !entry.isDirectory()) files.add(`${pkg.path}/${entry.name}`);
    for (const file of [...files].sort()) {
      mkdirSync(dirname(join(target, file)), { recursive: true });
      copyFileSync(join(modulesDir, file), join(target, file));
    }
    staged.push(pkg);
  }
  return staged;
}

/**
 * Every module a server may name (`@modelcontextprotocol/sdk/server/mcp.js`) with the file Node's
 * `require` loads for it (absolute): for each allowed package (the layer's own dependencies), each
 * subpath its `exports` map offers (a `*` pattern stands for every file it matches) but those
 * `allowed` refuses, or every module file of a package without `exports`.
 */
export function layerEntries(modulesDir: string, layerDir: string, allowed: AllowedModules): { specifier: string; file: string }[] {
  const roots = Object.keys(readPackageJson(join(layerDir, 'package.json')).dependencies ?? {});
  const unlisted = allowed.packages.filter((name) => !roots.includes(name));
  if (unlisted.length > 0)
    throw new Error(`The MCP layer cannot be built: the host allows ${unlisted.join(', ')}, which ${join(layerDir, 'package.json')} does not list.`);
  return roots.flatMap((name) => {
    const dir = join(realpathSync(modulesDir), name);
    const denied = allowed.deniedSubpaths[name] ?? [];
    const refused = (subpath: string) => denied.some((d) => (d.endsWith('/') ? `${subpath}/`.startsWith(d) : subpath === d));
    return (
      packageSubpaths(dir)
        .filter(({ subpath, file }) => !refused(subpath) && MODULE_FILE.test(file))
        .map(({ subpath, file }) => ({ specifier: subpath === '' ? name : `${name}/${subpath}`, file: join(dir, file) }))
        // A subpath may name a file the package does not ship (the SDK's `.`): it fails alike everywhere.
        .filter(({ file }) => existsSync(file))
    );
  });
}

/** Conditions Node 22's `require` matches in `exports` (which one wins is the map's order). */
const REQUIRE_CONDITIONS: ReadonlySet<string> = new Set(['node', 'require', 'module-sync', 'node-addons', 'default']);

/** The subpaths a package offers (`server/mcp.js`, `` for the package itself) and the file each loads, relative to the package. */
function packageSubpaths(dir: string): { subpath: string; file: string }[] {
  const manifest = readPackageJson(join(dir, 'package.json')) as PackageJson & { exports?: unknown; main?: string };
  const all = () => filesUnder(dir).filter((file) => !file.startsWith('node_modules/'));
  if (manifest.exports === undefined || manifest.exports === null)
    return [
      ...(manifest.main === undefined ? [] : [{ subpath: '', file: manifest.main.replace(/^\.\//, '') }]),
      ...all().map((file) => ({ subpath: file, file })),
    ];
  const map =
    typeof manifest.exports === 'object' && !Array.isArray(manifest.exports) && Object.keys(manifest.exports).every((key) => key.startsWith('.'))
      ? (manifest.exports as Record<string, unknown>)
      : { '.': manifest.exports };
  const out: { subpath: string; file: string }[] = [];
  for (const [key, value] of Object.entries(map)) {
    const target = requireTarget(value);
    if (target === null) continue;
    const subpath = key.replace(/^\.\/?/, '');
    const star = key.indexOf('*');
    if (star === -1) {
      out.push({ subpath, file: target.replace(/^\.\//, '') });
      continue;
    }
    const [keyBefore, keyAfter] = [subpath.slice(0, subpath.indexOf('*')), subpath.slice(subpath.indexOf('*') + 1)];
    const [before, after] = target.replace(/^\.\//, '').split('*') as [string, string | undefined];
    for (const file of all()) {
      if (!file.startsWith(before) || !file.endsWith(after ?? '') || file.length < before.length + (after ?? '').length) continue;
      const matched = file.slice(before.length, file.length - (after ?? '').length);
      out.push({ subpath: keyBefore + matched + keyAfter, file });
    }
  }
  return out;
}

/** The target `require` resolves an `exports` value to: its first matching condition, recursively; null if none or blocked. */
function requireTarget(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = requireTarget(item);
      if (target !== null) return target;
    }
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  // As Node does: the first condition that matches and leads to a target, in the map's order.
  for (const [condition, target] of Object.entries(value)) {
    if (!REQUIRE_CONDITIONS.has(condition)) continue;
    const resolved = requireTarget(target);
    if (resolved !== null) return resolved;
  }
  return null;
}

/** Every file under `dir`, relative and `/`-separated, following links. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = `${prefix}${entry.name}`;
    const stats = entry.isSymbolicLink() ? statSync(join(dir, path)) : entry;
    return stats.isDirectory() ? filesUnder(dir, `${path}/`) : stats.isFile() ? [path] : [];
  });
}

/**
 * The files of `modulesDir` that loading `entries` reaches, relative and `/`-separated: esbuild
 * follows every `require` and `import` with a literal name, resolving as Node 22's `require` does
 * (`main` only, `exports` with the require conditions). Nothing is written. A dependency the tree
 * marks optional and is not installed stays unresolved, as at run time.
 */
function traceLayerFiles(modulesDir: string, entries: readonly string[], missingOptional: ReadonlySet<string>): string[] {
  let result;
  try {
    result = buildSync({
      stdin: { contents: entries.map((file) => `require(${JSON.stringify(file)});`).join('\n'), resolveDir: modulesDir, loader: 'js' },
      absWorkingDir: modulesDir,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      // ESM output: it takes CommonJS and ES module inputs alike (top-level await included).
      format: 'esm',
      mainFields: ['main'],
      conditions: ['module-sync'],
      external: [...missingOptional].flatMap((name) => [name, `${name}/*`]),
      logLevel: 'silent',
    });
  } catch (error) {
    throw new Error(`The MCP layer cannot be built: esbuild could not follow its modules: ${(error as Error).message}`);
  }
  return Object.keys(result.metafile.inputs)
    .filter((input) => input !== '<stdin>')
    .map((input) => relative(modulesDir, resolve(modulesDir, input)).split(sep).join('/'))
    .filter((path) => path !== '' && !path.startsWith('..') && !isAbsolute(path));
}

/**
 * The layer's packages: the dependencies named by `layerDir`'s package.json, resolved from the top
 * of `modulesDir`, then each package's `dependencies`, `optionalDependencies` and `peerDependencies`
 * resolved as Node does, from the package's directory upwards. A missing optional dependency or
 * optional peer is skipped (npm does not install those either); any other missing one throws.
 */
export function layerPackages(sources: McpLayerSources): LayerPackage[] {
  return resolveLayerTree(sources).packages;
}

/** `layerPackages`, and the names of the optional dependencies (and optional peers) not installed. */
function resolveLayerTree(sources: McpLayerSources): { packages: LayerPackage[]; missingOptional: Set<string> } {
  const modulesDir = realpathSync(sources.modulesDir);
  const missingOptional = new Set<string>();
  const roots = Object.keys(readPackageJson(join(sources.layerDir, 'package.json')).dependencies ?? {});
  if (roots.length === 0) throw new Error(`${join(sources.layerDir, 'package.json')} names no dependencies for the MCP layer.`);
  const found = new Map<string, LayerPackage>();

  const visit = (dir: string): void => {
    const path = relative(modulesDir, dir).split(sep).join('/');
    if (found.has(path)) return;
    const manifest = readPackageJson(join(dir, 'package.json'));
    found.set(path, { path, name: manifest.name ?? path, version: manifest.version ?? '' });
    const optionalPeers = new Set(
      Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name),
    );
    const wanted: [string, boolean][] = [
      ...Object.keys(manifest.dependencies ?? {}).map((name): [string, boolean] => [name, false]),
      ...Object.keys(manifest.optionalDependencies ?? {}).map((name): [string, boolean] => [name, true]),
      ...Object.keys(manifest.peerDependencies ?? {}).map((name): [string, boolean] => [name, optionalPeers.has(name)]),
    ];
    for (const [name, optional] of wanted) {
      const resolved = resolvePackage(name, dir, modulesDir);
      if (resolved !== null) visit(resolved);
      else if (optional) missingOptional.add(name);
      else
        throw new Error(`The MCP layer cannot be built: ${name}, a dependency of ${manifest.name ?? path}, is not installed under ${modulesDir} (run npm ci).`);
    }
  };

  for (const name of roots) {
    const resolved = resolvePackage(name, modulesDir, modulesDir);
    if (resolved === null) throw new Error(`The MCP layer cannot be built: ${name} is not installed under ${modulesDir} (run npm ci).`);
    visit(resolved);
  }
  // Code-unit order, the same on every machine whatever its locale.
  return { packages: [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), missingOptional };
}

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
}

function readPackageJson(file: string): PackageJson {
  return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
}

/**
 * Where Node would find package `name` required from `fromDir`: `<dir>/node_modules/<name>` for
 * `fromDir` and each directory above it, stopping at `modulesDir` (a package outside it could not be
 * laid out the same way in the layer). Returns the real directory, or null.
 */
function resolvePackage(name: string, fromDir: string, modulesDir: string): string | null {
  // Inside modulesDir the candidates are its own entries and those of the packages' node_modules.
  let dir = fromDir;
  for (;;) {
    const candidate = dir === modulesDir ? join(modulesDir, name) : join(dir, 'node_modules', name);
    if (isPackage(candidate)) {
      const real = realpathSync(candidate);
      const inside = relative(modulesDir, real);
      if (inside === '' || inside.startsWith('..') || isAbsolute(inside))
        throw new Error(`The MCP layer cannot be built: ${name} resolves to ${real}, outside ${modulesDir} (a linked package).`);
      return real;
    }
    if (dir === modulesDir) return null;
    // From <modulesDir>/a/node_modules/b the next candidates are <modulesDir>/a/node_modules/<name>,
    // then <modulesDir>/<name>: step over the package directory and its node_modules.
    dir = parentPackageDir(dir, modulesDir);
  }
}

/** The package directory whose node_modules holds `dir`, or `modulesDir` when `dir` is top-level. */
function parentPackageDir(dir: string, modulesDir: string): string {
  const parts = relative(modulesDir, dir).split(sep);
  const last = parts.lastIndexOf('node_modules');
  return last === -1 ? modulesDir : join(modulesDir, ...parts.slice(0, last));
}

function isPackage(dir: string): boolean {
  try {
    return statSync(join(dir, 'package.json')).isFile();
  } catch {
    return false;
  }
}

/**
 * Copies `from` into `to`, following symbolic links, keeping the entries `keep` accepts (called with
 * the path relative to `from`, `/`-separated). A directory left with nothing to copy is not created.
 */
function copyTree(from: string, to: string, keep: (path: string, isDirectory: boolean) => boolean, prefix = ''): void {
  let created = false;
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const path = prefix + entry.name;
    const stats = entry.isSymbolicLink() ? statSync(source) : entry;
    if (stats.isDirectory()) {
      if (keep(path, true)) copyTree(source, join(to, entry.name), keep, `${path}/`);
    } else if (stats.isFile() && keep(path, false)) {
      if (!created) mkdirSync(to, { recursive: true });
      created = true;
      copyFileSync(source, join(to, entry.name));
    }
  }
}
