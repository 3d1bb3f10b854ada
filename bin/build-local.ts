/**
 * `npm run build`: builds the local platform for `npm start` (lib/local/build.ts). `npm start` runs
 * this itself when the build is missing or stale, so nobody has to remember it.
 * LOCAL_BUILD_DIR chooses the build root (default `.tmp/local-build`).
 */
import { relative, resolve } from 'node:path';
import { buildLocalPlatform, DEFAULT_BUILD_ROOT, REPO_ROOT } from '../lib/local/build.ts';

const buildRoot = process.env['LOCAL_BUILD_DIR'] ? resolve(REPO_ROOT, process.env['LOCAL_BUILD_DIR']) : DEFAULT_BUILD_ROOT;
const built = await buildLocalPlatform(buildRoot);
console.log(`Built the local platform into ${relative(process.cwd(), built.dir) || '.'} in ${built.ms} ms (${Object.keys(built.inputs).length} inputs).`);
