import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { withWalkthroughBlocks } from '../lib/docs/walkthrough.ts';

/**
 * `npm run docs:walkthrough`: copies the sections of docs/walkthrough.sh into the guide's (docs/guide.md) marked
 * walkthrough blocks (lib/docs/walkthrough.ts). Edit the script, run this, commit both; a unit test
 * fails while they differ.
 */
const scriptFile = fileURLToPath(new URL('../docs/walkthrough.sh', import.meta.url));
const readmeFile = fileURLToPath(new URL('../docs/guide.md', import.meta.url));

try {
  const [readme, script] = await Promise.all([readFile(readmeFile, 'utf8'), readFile(scriptFile, 'utf8')]);
  const updated = withWalkthroughBlocks(readme, script);
  if (updated === readme) console.log(`The walkthrough in ${readmeFile} already matches ${scriptFile}`);
  else {
    await writeFile(readmeFile, updated);
    console.log(`Wrote the sections of ${scriptFile} into ${readmeFile}`);
  }
} catch (error) {
  console.error(`Cannot update the guide's walkthrough: ${(error as Error).message}`);
  process.exitCode = 1;
}
