import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/local-platform.ts';
import { expectAccessible, expectNoSidewaysScroll, HAS_CHROMIUM, startConsoleHarness, type ConsoleHarness } from '../support/console-browser.ts';

type User = Awaited<ReturnType<typeof createUser>>;

// The browser globals the callbacks of page.evaluate use there (this project's types are Node's).
declare const document: any;
declare const window: any;
declare const DataTransfer: any;
declare const DataTransferItem: any;
declare const DragEvent: any;
declare const File: any;

/** A file to drop: its path inside the drop (`site/css/a.css`) and its text. */
interface Dropped {
  readonly path: string;
  readonly text: string;
  readonly type?: string;
}

/**
 * Drops files on the page's drop zone as a browser does: a DataTransfer holding the files, and for
 * a folder the directory entries the File and Directory Entries API gives (`webkitGetAsEntry`),
 * which a script cannot make for a real DataTransfer, so they are stood in for, with the same shape.
 */
async function drop(page: Page, files: readonly Dropped[]): Promise<void> {
  await page.evaluate((list: readonly Dropped[]) => {
    type Node = { isFile: boolean; isDirectory: boolean; name: string; fullPath: string; children?: Node[]; file?: unknown };
    const roots = new Map<string, Node>();
    const data = new DataTransfer();
    const dirs = new Map<string, Node>();
    for (const entry of list) {
      const parts = entry.path.split('/');
      const name = parts[parts.length - 1] ?? entry.path;
      const file = new File([entry.text], name, { type: entry.type ?? '' });
      const leaf: Node = { isFile: true, isDirectory: false, name, fullPath: `/${entry.path}`, file };
      if (parts.length === 1) {
        data.items.add(file);
        continue;
      }
      let parent: Node | undefined;
      for (let i = 1; i < parts.length; i++) {
        const path = parts.slice(0, i).join('/');
        let dir = dirs.get(path);
        if (dir === undefined) {
          dir = { isFile: false, isDirectory: true, name: parts[i - 1]!, fullPath: `/${path}`, children: [] };
          dirs.set(path, dir);
          if (parent === undefined) roots.set(path, dir);
          else parent.children!.push(dir);
        }
        parent = dir;
      }
      parent!.children!.push(leaf);
    }
    // One placeholder item per dropped folder, whose entry is the folder.
    const entryOf = new Map<string, unknown>();
    const live = (node: Node): unknown =>
      node.isFile
        ? { isFile: true, isDirectory: false, name: node.name, fullPath: node.fullPath, file: (ok: (f: unknown) => void) => ok(node.file) }
        : {
            isFile: false,
            isDirectory: true,
            name: node.name,
            fullPath: node.fullPath,
            createReader() {
              let read = false;
              return { readEntries: (ok: (e: unknown[]) => void) => ok(read ? [] : ((read = true), node.children!.map(live))) };
            },
          };
    for (const [path, node] of roots) {
      const placeholder = new File([''], `${path}.folder-placeholder`);
      entryOf.set(placeholder.name, live(node));
      data.items.add(placeholder);
    }
    const original = DataTransferItem.prototype.webkitGetAsEntry;
    DataTransferItem.prototype.webkitGetAsEntry = function (this: { getAsFile(): { name: string } | null }) {
      const name = this.getAsFile()?.name ?? '';
      return entryOf.get(name) ?? original.call(this);
    };
    const zone = document.querySelector('[data-testid="drop-zone"]');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    // The page took the entries while the event ran; the stand-in goes once they are read.
    setTimeout(() => (DataTransferItem.prototype.webkitGetAsEntry = original), 2000);
  }, files);
}

/** Waits until every upload in the list has finished, and fails naming any that failed. */
async function uploadsFinished(page: Page, count: number): Promise<void> {
  await page.getByText(/^Uploads finished:/).waitFor();
  const uploads = page.locator('.uploads');
  expect(await uploads.textContent()).toContain(`Uploads finished: ${count} of ${count} uploaded.`);
}

/** Opens a folder of the tree (by its name) and returns the folder's list item. */
async function openFolder(page: Page, tree: string, name: string) {
  const folder = page.getByRole('region', { name: tree }).getByRole('button', { name: `${name}/ folder`, exact: true });
  if ((await folder.getAttribute('aria-expanded')) !== 'true') await folder.click();
  return folder.locator('xpath=ancestor::li[1]');
}

/** Fills a CodeMirror field (the console's CodeEditor) once it has loaded. */
async function fillCode(page: Page, label: string, text: string): Promise<void> {
  await page.locator('.code-editor[data-ready="true"]').first().waitFor();
  await page.getByRole('textbox', { name: label }).fill(text);
}

const XSS_NAME = '<img src=x onerror=window.pwned=1>.txt';

/**
 * The console's Knowledge, Website and Skills pages in real Chromium against the running local
 * platform: uploads by drop and by picker (files and folders), the tree, search with marked hits,
 * downloads, a live site, SKILL.md editing with its preview and the API's refusals. Waits are on
 * what the page shows, never on time.
 */
describe.skipIf(!HAS_CHROMIUM)('console: knowledge, website, skills', () => {
  let harness: ConsoleHarness;
  let alice: User;
  let bob: User;
  let folderDir: string;

  beforeAll(async () => {
    harness = await startConsoleHarness();
    alice = await createUser(harness.platform, { alias: 'alice', credits: 200 });
    bob = await createUser(harness.platform, { alias: 'bob', credits: 50 });
    folderDir = await mkdtemp(join(tmpdir(), 'console-data-'));
    await mkdir(join(folderDir, 'handbook', 'policies'), { recursive: true });
    await writeFile(join(folderDir, 'handbook', 'intro.md'), '# Handbook\nWelcome aboard.\n');
    await writeFile(join(folderDir, 'handbook', 'policies', 'refunds.md'), 'Refunds are paid within 14 days.\n');
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
    if (folderDir) await rm(folderDir, { recursive: true, force: true });
  });

  it('uploads files and folders by drop and by picker, shows them in the tree, searches with marked hits, downloads and deletes', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/knowledge');
    await page.getByRole('region', { name: 'Knowledge files' }).getByText('No files yet').waitFor();
    // Act: a dropped file and a dropped folder, into notes/
    await page.getByLabel('Into folder').fill('notes');
    await drop(page, [
      { path: 'forecast.md', text: '# Forecast\nRain on Tuesday, sun by the weekend.\n', type: 'text/markdown' },
      { path: 'trips/2026/alps.txt', text: 'Hiking in the Alps if the forecast holds.\n' },
      { path: XSS_NAME, text: 'A file whose name is markup.\n' },
    ]);
    // Assess
    await uploadsFinished(page, 3);
    const notes = await openFolder(page, 'Knowledge files', 'notes');
    await notes.getByText('forecast.md').waitFor();
    await notes.getByText(XSS_NAME).waitFor();
    expect(await page.locator('.tree img').count()).toBe(0);
    const trips = await openFolder(page, 'Knowledge files', 'trips');
    await openFolder(page, 'Knowledge files', '2026');
    await trips.getByText('alps.txt').waitFor();
    // Act: a folder through the picker, into the top folder
    await page.getByLabel('Into folder').fill('');
    await page.getByLabel('Folder to upload').setInputFiles(join(folderDir, 'handbook'));
    // Assess
    await uploadsFinished(page, 2);
    await openFolder(page, 'Knowledge files', 'handbook');
    const policies = await openFolder(page, 'Knowledge files', 'policies');
    await policies.getByText('refunds.md').waitFor();
    const listed = await harness.platform.api('GET', '/knowledge/list?prefix=handbook/policies', { token: alice.token });
    expect(listed.body.data.files.map((f: { fileName: string }) => f.fileName)).toEqual(['refunds.md']);
    // Act: a file through the picker
    await page
      .getByLabel('Files to upload')
      .setInputFiles({ name: 'todo.txt', mimeType: 'text/plain', buffer: Buffer.from('Buy an umbrella for the rain.\n') });
    await uploadsFinished(page, 1);
    await page.getByRole('region', { name: 'Knowledge files' }).getByText('todo.txt').waitFor();
    await expectAccessible(page);

    // Act: search
    const search = page.getByRole('form', { name: 'Search knowledge' });
    await search.getByLabel('Search for').fill('rainy forecast');
    await search.getByRole('button', { name: 'Search' }).click();
    // Assess: the hits are marked, whatever their form ("Rain" for "rainy")
    const results = page.getByRole('list', { name: 'Search results' });
    await results.getByText('forecast.md', { exact: true }).waitFor();
    const marks = await results.locator('mark').allTextContents();
    expect(marks.map((m) => m.toLowerCase())).toEqual(expect.arrayContaining(['rain', 'forecast']));

    // Act: download
    const fileRow = notes.locator('li.tree-file').filter({ hasText: 'forecast.md' });
    const [download] = await Promise.all([page.waitForEvent('download'), fileRow.getByRole('button', { name: 'Download notes/forecast.md' }).click()]);
    // Assess
    expect(download.suggestedFilename()).toBe('forecast.md');
    expect(await readFile(await download.path(), 'utf8')).toContain('Rain on Tuesday');
    await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor();

    // Act: delete a file, then a folder
    await fileRow.getByRole('button', { name: 'Delete', exact: true }).click();
    await fileRow.getByRole('button', { name: 'Yes, delete' }).click();
    await notes.getByText('forecast.md').waitFor({ state: 'detached' });
    const handbookRow = page
      .getByRole('region', { name: 'Knowledge files' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('button', { name: 'handbook/ folder' }) });
    await handbookRow.getByRole('button', { name: 'Delete folder' }).first().click();
    await handbookRow.getByRole('button', { name: 'Yes, delete folder' }).click();
    // Assess
    await page.getByRole('button', { name: 'handbook/ folder' }).waitFor({ state: 'detached' });
    const after = await harness.platform.api('GET', '/knowledge/list?prefix=notes', { token: alice.token });
    expect(after.body.data.files.map((f: { fileName: string }) => f.fileName)).toEqual([XSS_NAME]);
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
    await page.context().close();
  });

  it('sends a file past the direct upload limit through its upload link, with progress, and shows the API’s refusal of one past that limit too', async () => {
    // Prepare: a knowledge file over the upload link's limit (50 MB unless configured), as the picker gives it
    const huge = join(folderDir, 'huge.bin');
    await writeFile(huge, Buffer.alloc(51 * 1024 * 1024, 1));
    const page = await harness.open(alice.token, '/knowledge');
    // Act
    await page.getByLabel('Files to upload').setInputFiles(huge);
    // Assess
    await page.getByText('Uploads finished: 0 of 1 uploaded.').waitFor();
    const refusal = page.getByRole('list', { name: 'Uploads' }).getByRole('alert');
    expect(await refusal.textContent()).toMatch(/413|too large|limit/i);
    // Act: a 6 MB text file, past the 5 MB of a direct upload
    await page.getByRole('button', { name: 'Clear the list' }).click();
    const big = join(folderDir, 'big.txt');
    await writeFile(big, 'Rain and more rain. '.repeat((6 * 1024 * 1024) / 20 + 1));
    await page.getByLabel('Files to upload').setInputFiles(big);
    // Assess
    await uploadsFinished(page, 1);
    expect(await page.getByRole('progressbar', { name: 'Upload of big.txt' }).getAttribute('aria-valuetext')).toBe('100%');
    await expect
      .poll(
        async () => (await harness.platform.api('GET', '/knowledge/list', { token: alice.token })).body.data.files.map((f: { fileName: string }) => f.fileName),
        { timeout: 30_000 },
      )
      .toContain('big.txt');
    await page.context().close();
  });

  it('uploads a site’s files, links to the live site that serves them, and deletes one', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/websites');
    await page.getByText('not published').first().waitFor();
    // Act
    await drop(page, [
      { path: 'index.html', text: '<!doctype html><title>Alice</title><h1>Hello from alice</h1>', type: 'text/html' },
      { path: 'assets/css/style.css', text: 'h1 { color: teal }', type: 'text/css' },
    ]);
    // Assess
    await uploadsFinished(page, 2);
    await page.getByText('published', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Site files' }).getByText('index.html').waitFor();
    const assets = await openFolder(page, 'Site files', 'assets');
    await openFolder(page, 'Site files', 'css');
    await assets.getByText('style.css').waitFor();
    expect(await page.locator('.usage-line').textContent()).toMatch(/of 50\.0 MB used/);
    await expectAccessible(page);
    // Act: the live site
    const [site] = await Promise.all([page.waitForEvent('popup'), page.locator('a.site-link').click()]);
    await site.waitForLoadState();
    // Assess
    expect(site.url()).toMatch(/^http:\/\/alice\.localhost:\d+\/$/);
    expect(await site.locator('h1').textContent()).toBe('Hello from alice');
    const css = await site.goto(`${site.url()}assets/css/style.css`);
    expect(await css?.text()).toBe('h1 { color: teal }');
    await site.close();
    // Act: clear the cache, then delete the stylesheet
    await page.getByRole('button', { name: 'Clear the CDN cache' }).click();
    await page.getByText(/Cache clearing completed/).waitFor();
    const row = assets.locator('li.tree-file').filter({ hasText: 'style.css' });
    await row.getByRole('button', { name: 'Delete', exact: true }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    // Assess
    await assets.getByText('style.css').waitFor({ state: 'detached' });
    const listed = await harness.platform.api('GET', '/website/list?prefix=assets/css', { token: alice.token });
    expect(listed.body.data.files).toEqual([]);
    await page.context().close();
  });

  it('creates a skill with a live preview, shows the API’s refusal of an invalid SKILL.md, stars and deletes it', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/skills/new');
    // Act: an invalid SKILL.md
    await fillCode(page, 'SKILL.md', '# No frontmatter here\n');
    await page.getByRole('button', { name: 'Create skill' }).click();
    // Assess
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('must start with YAML frontmatter');
    // Act: YAML that does not parse is marked at its line
    await fillCode(page, 'SKILL.md', '---\nname: broken\ndescription: [unclosed\n---\nBody\n');
    await page.getByRole('button', { name: 'Create skill' }).click();
    await expect.poll(() => page.locator('.problems').textContent()).toMatch(/Line \d+: .*not valid YAML/);
    // Act: a valid one, with markup in its text
    const skillMd = [
      '---',
      'name: trip-planner',
      'description: Plans trips <script>window.pwned=1</script>',
      '---',
      '# Trip planner',
      '',
      'Check the **forecast** first; see [the docs](https://example.com/docs) and [this](javascript:window.pwned=1).',
      '',
      '- Pack <img src=x onerror=window.pwned=1> light',
      '- Book early',
      '',
      '```python',
      'print("<b>not bold</b>")',
      '```',
      '',
    ].join('\n');
    await fillCode(page, 'SKILL.md', skillMd);
    // Assess: the preview, as text and elements
    const preview = page.getByRole('region', { name: 'Preview of SKILL.md' });
    await preview.getByRole('heading', { name: 'Trip planner' }).waitFor();
    expect(await preview.getByRole('row', { name: /description/ }).textContent()).toContain('Plans trips <script>window.pwned=1</script>');
    expect(await preview.locator('strong').textContent()).toBe('forecast');
    expect(await preview.getByRole('link', { name: 'the docs' }).getAttribute('href')).toBe('https://example.com/docs');
    expect(await preview.getByRole('link', { name: 'this' }).count()).toBe(0);
    expect(await preview.getByRole('listitem').first().textContent()).toBe('Pack <img src=x onerror=window.pwned=1> light');
    expect(await preview.locator('img, script, b').count()).toBe(0);
    await expectAccessible(page);
    // Act: create
    await page.getByRole('button', { name: 'Create skill' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'alice/trip-planner' }).waitFor();
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
    // Act: star it
    await page.getByRole('button', { name: 'Star' }).click();
    // Assess
    await page.getByRole('button', { name: 'Starred' }).waitFor();
    await page.getByText('1 star', { exact: true }).waitFor();
    // Act: edit it (the name is kept; the description changes)
    await page.getByLabel('Description').fill('Plans trips around the weather');
    await page.getByRole('button', { name: 'Save' }).click();
    // Assess
    await page.locator('.lead').getByText('Plans trips around the weather').waitFor();
    // The list and stars show it; search finds it with its words marked
    await page.getByRole('link', { name: 'All skills' }).click();
    await page.getByRole('table', { name: 'Your skills' }).getByRole('link', { name: 'alice/trip-planner' }).waitFor();
    await page.getByRole('table', { name: 'Your stars' }).getByText('alice/trip-planner').waitFor();
    const find = page.getByRole('form', { name: 'Find public skills' });
    await find.getByLabel('Words').fill('weather');
    await find.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('list', { name: 'Public skills found' }).locator('mark').first().waitFor();
    expect(await page.getByRole('list', { name: 'Public skills found' }).locator('mark').first().textContent()).toBe('weather');
    await expectAccessible(page);
    // Act: delete
    await page.getByRole('table', { name: 'Your skills' }).getByRole('link', { name: 'alice/trip-planner' }).click();
    await page.getByRole('button', { name: 'Delete skill' }).click();
    await page.getByRole('button', { name: 'Yes, delete skill' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Skills' }).waitFor();
    await page.getByText('No skills yet.').waitFor();
    await page.context().close();
  });

  it('shows another user none of these, and works at phone width without sideways scroll', async () => {
    // Prepare: alice keeps a private skill and a file
    const created = await harness.platform.api('POST', '/skills/create', {
      token: alice.token,
      body: { skillMd: '---\nname: secret-recipe\ndescription: Alice only\n---\nBody\n', visibility: 'private' },
    });
    expect(created.status, created.text).toBe(201);
    // Act
    const knowledge = await harness.open(bob.token, '/knowledge', 'phone');
    // Assess
    await knowledge.getByRole('region', { name: 'Knowledge files' }).getByText('No files yet').waitFor();
    await expectNoSidewaysScroll(knowledge);
    await expectAccessible(knowledge);
    await knowledge.context().close();
    const site = await harness.open(bob.token, '/websites', 'phone');
    await site.getByRole('region', { name: 'Site files' }).getByText('No files yet').waitFor();
    expect(await site.locator('main').textContent()).not.toContain('alice');
    await expectNoSidewaysScroll(site);
    await site.context().close();
    const skills = await harness.open(bob.token, '/skills', 'phone');
    await skills.getByText('No skills yet.').waitFor();
    await skills.getByText('You have starred nothing yet.').waitFor();
    expect(await skills.locator('main').textContent()).not.toContain('secret-recipe');
    await expectNoSidewaysScroll(skills);
    // Alice's private skill by its address is a refusal for bob
    await skills.goto(`${harness.consoleUrl}#/skills/${created.body.data.skill.skillId}`);
    await expect.poll(() => skills.getByRole('alert').textContent()).toMatch(/not found/i);
    await skills.context().close();
  });
});
