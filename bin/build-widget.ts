/**
 * `npm run build:widget`: writes the areas' browser assets (the embed widget) to `dist/assets/<host>/`
 * at the paths they are served at, and prints each one's size gzipped. Neither `npm start` nor the
 * stack needs it (both build the widget themselves); it is for looking at the file, or hosting it
 * elsewhere.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { assetPaths, buildAsset } from '../lib/assets/build-asset.ts';
import { areas } from '../lib/manifest/areas.ts';

const out = join(process.cwd(), 'dist', 'assets');
for (const asset of areas.flatMap((area) => area.assets)) {
  const started = Date.now();
  const code = await buildAsset(asset);
  const paths = assetPaths(asset);
  for (const path of [paths.current, paths.versioned]) {
    const file = join(out, asset.host, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, code);
  }
  const gzipped = gzipSync(code, { level: 9 }).length;
  console.log(
    `${relative(process.cwd(), join(out, asset.host, paths.current))} (and ${paths.versioned}): ${(code.length / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped, in ${Date.now() - started} ms`,
  );
}
