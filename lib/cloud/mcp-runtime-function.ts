import { copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, LayerVersion, Runtime, TenancyConfig } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
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
 * serve the MCP routes (functions/runtimes/mcp-lambda-runtime.ts).
 *
 * Tenant isolation mode (PER_TENANT), as the Python runtime: every invoke carries the server owner's
 * user id as tenant id, and Lambda never reuses an execution environment across tenants, so one
 * user's server can never see another's process, memory or /tmp. Such a function can have no
 * function URL; only the functions granted Invoke reach it.
 *
 * The modules servers may load (`@modelcontextprotocol/sdk`, `zod`) come from a layer
 * (`/opt/nodejs/node_modules`, on Lambda's NODE_PATH) built at synth time from the repository's
 * installed packages, without a network (stageMcpLayerAsset).
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
      code: locallyStagedCode(layerDir, Runtime.NODEJS_22_X, (outputDir) => stageMcpLayerAsset(outputDir, { layerDir, modulesDir })),
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

/** Writes the function's code into `outputDir`: every file of the host directory (plain ESM, no build). */
export function stageMcpHostAsset(hostDir: string, outputDir: string): void {
  copyTree(hostDir, outputDir, () => true);
}

export interface McpLayerSources {
  /** Directory whose package.json `dependencies` name the layer's packages. */
  readonly layerDir: string;
  /** The installed `node_modules` they and their dependencies are copied from. */
  readonly modulesDir: string;
}

/** One installed package of the layer: its place under node_modules, its name and version. */
export interface LayerPackage {
  /** Directory relative to the node_modules root, `/`-separated (`express/node_modules/depd`). */
  readonly path: string;
  readonly name: string;
  readonly version: string;
}

/**
 * Files never loaded at run time, left out of the layer: type declarations, source maps and
 * documentation (license files are kept, whatever their extension).
 */
const UNSHIPPED_FILE = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i;
const LICENSE_FILE = /^(licen[cs]e|notice|copying)/i;

/**
 * Writes the layer's content into `outputDir`: `nodejs/node_modules/` holding the packages named by
 * `layerDir`'s package.json `dependencies` and their whole production dependency trees, copied from
 * `modulesDir` in the same nested layout, so Node resolves each `require` to the same copy as in the
 * repository. Nothing is installed or downloaded. Returns the packages copied.
 */
export function stageMcpLayerAsset(outputDir: string, sources: McpLayerSources): LayerPackage[] {
  const packages = layerPackages(sources);
  const target = join(outputDir, 'nodejs', 'node_modules');
  for (const pkg of packages) {
    const from = join(sources.modulesDir, ...pkg.path.split('/'));
    // A package's own node_modules holds nested dependencies, each copied as a package of its own
    // when something in the tree needs it.
    copyTree(from, join(target, ...pkg.path.split('/')), (path, isDirectory) => {
      if (isDirectory) return path !== 'node_modules';
      const name = path.slice(path.lastIndexOf('/') + 1);
      return LICENSE_FILE.test(name) || !UNSHIPPED_FILE.test(name);
    });
  }
  return packages;
}

/**
 * The layer's packages: the dependencies named by `layerDir`'s package.json, resolved from the top
 * of `modulesDir`, then each package's `dependencies`, `optionalDependencies` and `peerDependencies`
 * resolved as Node does, from the package's directory upwards. A missing optional dependency or
 * optional peer is skipped (npm does not install those either); any other missing one throws.
 */
export function layerPackages(sources: McpLayerSources): LayerPackage[] {
  const modulesDir = realpathSync(sources.modulesDir);
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
      else if (!optional)
        throw new Error(`The MCP layer cannot be built: ${name}, a dependency of ${manifest.name ?? path}, is not installed under ${modulesDir} (run npm ci).`);
    }
  };

  for (const name of roots) {
    const resolved = resolvePackage(name, modulesDir, modulesDir);
    if (resolved === null) throw new Error(`The MCP layer cannot be built: ${name} is not installed under ${modulesDir} (run npm ci).`);
    visit(resolved);
  }
  // Code-unit order, the same on every machine whatever its locale.
  return [...found.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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
