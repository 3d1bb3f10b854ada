import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { clientDocument, documentText, DOCUMENT_FILE, TYPES_FILE, typesText } from '../lib/docs/openapi-client.ts';

/**
 * `npm run client:generate`: writes clients/typescript/openapi.json (the platform's OpenAPI document)
 * and clients/typescript/src/api.ts (its types, by openapi-typescript). Run it after changing a
 * route or a schema and commit both; a unit test fails while they differ from the routes.
 */
async function writeIfChanged(file: URL, text: string): Promise<void> {
  const before = await readFile(file, 'utf8').catch(() => '');
  if (before === text) console.log(`${fileURLToPath(file)} is up to date`);
  else {
    await writeFile(file, text);
    console.log(`Wrote ${fileURLToPath(file)}`);
  }
}

try {
  const document = await clientDocument();
  await writeIfChanged(DOCUMENT_FILE, documentText(document));
  await writeIfChanged(TYPES_FILE, await typesText(document));
} catch (error) {
  console.error(`Cannot generate the client: ${(error as Error).message}`);
  process.exitCode = 1;
}
