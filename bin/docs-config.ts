import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { configurationTables, withConfigurationTables } from '../lib/docs/configuration.ts';

/**
 * `npm run docs:config`: writes the tables of docs/configuration.md from the settings' schemas
 * (lib/docs/configuration.ts), between their `<!-- config:NAME:start -->` / `end` markers. Describe a
 * setting in its schema, run this, commit both; a unit test fails while they differ.
 */
const docFile = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

try {
  const doc = await readFile(docFile, 'utf8');
  const updated = withConfigurationTables(doc, configurationTables());
  if (updated === doc) console.log(`The tables of ${docFile} already match the settings' schemas`);
  else {
    await writeFile(docFile, updated);
    console.log(`Wrote the settings' tables into ${docFile}`);
  }
} catch (error) {
  console.error(`Cannot update the configuration reference: ${(error as Error).message}`);
  process.exitCode = 1;
}
