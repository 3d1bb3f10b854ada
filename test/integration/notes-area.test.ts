/**
 * An area with data of its own joins by its folder and one list line: the notes fixture owns a
 * table and provides the store over it as a port, and the local platform creates the table, builds
 * the port and serves the routes, with no edit to the kernel's files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areas } from '../../lib/manifest/index.ts';
import { notesArea } from '../fixtures/notes-area/notes.module.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

describe('an area that provides its own store', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({ areas: [...areas, notesArea] });
  });
  afterAll(() => platform.stop({ removeData: true }));

  it("keeps each user's notes in the area's own table, through the port it provides", async () => {
    // Prepare
    const writer = await createUser(platform, { alias: 'note-writer' });
    const other = await createUser(platform, { alias: 'note-reader' });

    // Act
    const first = await platform.api('POST', '/notes/create', { token: writer.token, body: { text: 'first' } });
    const second = await platform.api('POST', '/notes/create', { token: writer.token, body: { text: 'second' } });
    const own = await platform.api('GET', '/notes/list', { token: writer.token });
    const others = await platform.api('GET', '/notes/list', { token: other.token });
    const invalid = await platform.api('POST', '/notes/create', { token: writer.token, body: { text: '' } });

    // Assess
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((own.body.data as { notes: { text: string }[] }).notes.map((n) => n.text)).toEqual(['first', 'second']);
    expect(others.body.data).toEqual({ notes: [] });
    expect(invalid.status).toBe(400);
  });
});
