/**
 * Handler modules are imported on their route's first call, not at start (lib/local/handlers.ts):
 * concurrent first calls share one import, a failed import answers 500 and is logged, and the next
 * call imports again. The modules are the notes fixture's real ones; the importer around them only
 * counts, or fails once, as a broken file or a full disk would.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineStreamRoute } from '../../functions/core/http/route.ts';
import { importFromSource, loadAreas, loadEveryRoute, type ImportHandlerModule } from '../../lib/local/handlers.ts';
import { areas } from '../../lib/manifest/index.ts';
import { notesArea } from '../fixtures/notes-area/notes.module.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const LIST_NOTES = 'test/fixtures/notes-area/handlers/list-notes.handler.ts';
const CREATE_NOTE = 'test/fixtures/notes-area/handlers/create-note.handler.ts';

let platform: TestPlatform | undefined;
afterEach(async () => {
  await platform?.stop({ removeData: true });
  platform = undefined;
});

describe('handler modules loaded on first use', () => {
  it("imports a route's module on its first call only, once for concurrent first calls", async () => {
    // Prepare
    const imported: string[] = [];
    const counting: ImportHandlerModule = (path) => {
      imported.push(path);
      return importFromSource(path);
    };
    platform = await startTestPlatform({ areas: [...areas, notesArea], importHandlerModule: counting });
    const user = await createUser(platform, { alias: 'lazy-reader' });
    const beforeCalls = imported.filter((path) => path.startsWith('test/fixtures/'));

    // Act
    const answers = await Promise.all([1, 2, 3].map(() => platform!.api('GET', '/notes/list', { token: user.token })));
    const again = await platform.api('GET', '/notes/list', { token: user.token });

    // Assess
    expect(beforeCalls).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(again.status).toBe(200);
    expect(imported.filter((path) => path.startsWith('test/fixtures/'))).toEqual([LIST_NOTES]);
  });

  it('answers 500 when a module fails to import, logs why, and imports it again on the next call', async () => {
    // Prepare
    const logLines: string[] = [];
    let failures = 1;
    const failingOnce: ImportHandlerModule = (path) => {
      if (path === CREATE_NOTE && failures-- > 0) return Promise.reject(new Error('EIO: i/o error, read'));
      return importFromSource(path);
    };
    platform = await startTestPlatform({ areas: [...areas, notesArea], importHandlerModule: failingOnce, logLines });
    const user = await createUser(platform, { alias: 'lazy-writer' });

    // Act
    const failed = await platform.api('POST', '/notes/create', { token: user.token, body: { text: 'first try' } });
    const retried = await platform.api('POST', '/notes/create', { token: user.token, body: { text: 'second try' } });

    // Assess
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ error: 'Internal server error.', code: 'INTERNAL_ERROR' });
    expect(failed.text).not.toContain('EIO');
    const logged = logLines.find((line) => line.includes('handler module failed to load'));
    expect(logged).toContain('EIO: i/o error');
    expect(logged).toContain('notes');
    expect(retried.status).toBe(200);
  });

  it('fails a route whose module exports the wrong kind of definition, naming the module and the route', async () => {
    // Prepare: list-notes is a buffered route; a streaming definition in its place is a mistake.
    const wrongKind: ImportHandlerModule = async (path) =>
      path === LIST_NOTES ? { default: defineStreamRoute({ run: async (_ctx, stream) => stream.end() }) } : importFromSource(path);
    const loaded = await loadAreas([notesArea], wrongKind);

    // Act
    const loading = loadEveryRoute(loaded);

    // Assess
    await expect(loading).rejects.toThrow(`${LIST_NOTES} must export default defineRoute(...) for route`);
  });
});
