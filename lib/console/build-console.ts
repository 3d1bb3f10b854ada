import type * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the console is served: `/console/` on the API's origin locally, on the CDN host in the cloud. */
export const CONSOLE_PATH = '/console';

/** One file of the built console, at its path under {@link CONSOLE_PATH}. */
export interface ConsoleFile {
  /** Relative to the console's root, e.g. `index.html`, `main-X4K2.js`. */
  readonly path: string;
  readonly body: string;
  readonly contentType: string;
  /** Hashed names never change content: cached for a year. `index.html` is revalidated. */
  readonly immutable: boolean;
}

/**
 * The console's Content-Security-Policy: its own scripts only (no inline script, so injected markup
 * cannot run), styles inline too (CodeMirror writes its theme into `<style>` elements), calls to
 * any HTTP or WebSocket origin (the API's hosts are other origins in the cloud), never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  'connect-src * ws: wss:',
  "frame-src 'self' blob: data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

function options(repoRoot: string): esbuild.BuildOptions & { write: false; metafile: true } {
  return {
    entryPoints: { main: join(repoRoot, 'console', 'main.tsx') },
    absWorkingDir: repoRoot,
    bundle: true,
    // Each page is a chunk of its own, loaded when first shown, so the first load carries only the
    // shell and the page asked for; CodeMirror comes only with the first editor.
    splitting: true,
    format: 'esm',
    outdir: join(repoRoot, '.tmp', 'console-out'),
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    minify: true,
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    write: false,
    metafile: true,
    logLevel: 'silent',
  };
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

function contentTypeOf(path: string): string {
  return CONTENT_TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
}

function filesOf(result: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] }, outdir: string): ConsoleFile[] {
  const built = result.outputFiles.map((file) => ({
    path: file.path.slice(outdir.length + 1),
    body: file.text,
    contentType: contentTypeOf(file.path),
    immutable: true,
  }));
  const script = built.find((f) => f.path.startsWith('main-') && f.path.endsWith('.js'));
  const style = built.find((f) => f.path.startsWith('main-') && f.path.endsWith('.css'));
  if (script === undefined) throw new Error('esbuild produced no console script');
  const version = createHash('sha256')
    .update(built.map((f) => f.path).join('\n'))
    .digest('hex')
    .slice(0, 12);
  // Relative URLs: the same files work at `/console/` locally and on the CDN host's `/console/`.
  const index = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="console-version" content="${version}">`,
    '<title>Agent Platform console</title>',
    // No favicon request (the page has none to show).
    '<link rel="icon" href="data:,">',
    style === undefined ? '' : `<link rel="stylesheet" href="./${style.path}">`,
    `<script type="module" src="./${script.path}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"><p class="boot">Loading the console…</p></div>',
    '<noscript>The console needs JavaScript. The same API is described at /docs.</noscript>',
    '</body>',
    '</html>',
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
  return [...built, { path: 'index.html', body: index, contentType: contentTypeOf('index.html'), immutable: false }];
}

/** Builds the console in memory (esbuild; a few hundred milliseconds): its scripts, styles and page. */
export async function buildConsole(repoRoot = REPO_ROOT): Promise<ConsoleFile[]> {
  // Imported here: the local platform builds the console on its first request, not on every start.
  const { build } = await import('esbuild');
  const opts = options(repoRoot);
  return filesOf(await build(opts), opts.outdir!);
}

/** The same, synchronously: for the CDK stack, whose constructs are built synchronously. */
export function buildConsoleSync(repoRoot = REPO_ROOT): ConsoleFile[] {
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof esbuild;
  const opts = options(repoRoot);
  return filesOf(buildSync(opts), opts.outdir!);
}
