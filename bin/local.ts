/**
 * The local platform from its TypeScript sources, compiled by tsx as modules are imported:
 * `npm run dev` and the tests. `npm start` runs the same main from a build (bin/start.mjs).
 */
import { runLocalPlatform } from '../lib/local/main.ts';

await runLocalPlatform();
