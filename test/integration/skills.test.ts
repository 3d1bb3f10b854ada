/**
 * Skills over HTTP (SPEC 4.5): SKILL.md frontmatter rules, names unique per owner, visibility on
 * every read, the raw endpoint's caching headers, and public skills reaching resource search in
 * the request that changes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCE_PARTITION, toResourceResults } from '../../functions/search/resource-index.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

function skillMd(name: string, description = `The ${name} skill`, body = `# ${name}\n\nSteps to follow.\n`): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}`;
}

describe('skills', () => {
  let platform: TestPlatform;
  let alice: { userId: string; token: string; alias: string | null };
  let bob: { userId: string; token: string; alias: string | null };

  const create = (token: string, body: Record<string, unknown>) => platform.api('POST', '/skills/create', { token, body });
  const searchSkills = async (text: string) =>
    toResourceResults(await platform.running.ports.searchIndex.query(RESOURCE_PARTITION, { text, limit: 20 })).filter((r) => r.resourceType === 'skill');

  beforeAll(async () => {
    platform = await startTestPlatform();
    alice = await createUser(platform, { alias: 'alice' });
    bob = await createUser(platform, { alias: 'bob' });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('creates a skill from its SKILL.md and answers 201 with the SPEC fields', async () => {
    // Prepare
    const text = skillMd('pdf-tools', 'Fill and merge PDF forms');
    // Act
    const res = await create(alice.token, { skillMd: text });
    // Assess
    expect(res.status).toBe(201);
    const { message, skill } = res.body.data;
    expect(message).toContain('alice/pdf-tools');
    expect(skill).toMatchObject({
      skillName: 'pdf-tools',
      fullName: 'alice/pdf-tools',
      slug: 'alice/pdf-tools',
      description: 'Fill and merge PDF forms',
      visibility: 'public',
      status: 'active',
    });
    expect(skill.skillId).toMatch(/^[0-9a-f-]{36}$/);
    expect(skill.rawUrl).toBe(`${platform.url}/skills/s/alice/pdf-tools/SKILL.md`);
    const got = await platform.api('GET', `/skills/${skill.skillId}`);
    expect(got.status).toBe(200);
    expect(got.body.data.skillMd).toBe(text);
  });

  it('refuses missing or malformed frontmatter with a 400 naming the problem', async () => {
    const cases: [string, string][] = [
      ['# no frontmatter at all\n', 'must start with YAML frontmatter'],
      ['---\ndescription: no name\n---\nbody\n', 'has no name'],
      ['---\nname: Bad_Name\ndescription: x\n---\n', 'lowercase letters and digits'],
      ['---\nname: -leading\ndescription: x\n---\n', 'lowercase letters and digits'],
      ['---\nname: double--hyphen\ndescription: x\n---\n', 'lowercase letters and digits'],
      [`---\nname: ${'a'.repeat(65)}\ndescription: x\n---\n`, '1 to 64 characters'],
      ['---\nname: [unclosed\ndescription: x\n---\n', 'not valid YAML'],
      ['---\nname: no-description\n---\nbody\n', 'description'],
      [`---\nname: long-description\ndescription: ${'d'.repeat(1025)}\n---\n`, 'at most 1024 characters'],
    ];
    for (const [text, problem] of cases) {
      const res = await create(alice.token, { skillMd: text });
      expect(res.status, text).toBe(400);
      expect(JSON.stringify(res.body), text).toContain(problem);
    }
  });

  it('takes the description from the request when the frontmatter has none', async () => {
    const res = await create(alice.token, { skillMd: '---\nname: described-by-request\n---\nbody\n', description: 'From the request' });
    expect(res.status).toBe(201);
    expect(res.body.data.skill.description).toBe('From the request');
  });

  it('publishes a SKILL.md that is a valid skill on its own: a description given in the request is written into its frontmatter', async () => {
    // Prepare
    const text = '---\nname: written-in\n---\n# Body\n';
    // Act
    const created = await create(alice.token, { skillMd: text, description: 'Given in the request' });
    const rawAfterCreate = (await platform.api('GET', '/skills/s/alice/written-in/SKILL.md')).text;
    const updated = await platform.api('PUT', '/skills/update', { token: alice.token, body: { slug: 'written-in', description: 'Changed later' } });
    const rawAfterUpdate = (await platform.api('GET', '/skills/s/alice/written-in/SKILL.md')).text;
    // Assess
    expect(created.status).toBe(201);
    expect(rawAfterCreate).toBe('---\nname: written-in\ndescription: "Given in the request"\n---\n# Body\n');
    expect(updated.status).toBe(200);
    expect(rawAfterUpdate).toContain('description: Changed later');
    expect(rawAfterUpdate.endsWith('\n---\n# Body\n')).toBe(true);
  });

  it('takes names the Agent Skills format allows: lowercase letters of any script, a quoted name with spaces around it', async () => {
    // Act
    const unicode = await create(alice.token, { skillMd: skillMd('données-ünïcode') });
    const quoted = await create(alice.token, { skillMd: '---\nname: "  quoted-name "\ndescription: Quoted\n---\n' });
    const bySlug = await platform.api('GET', `/skills/s/alice/${encodeURIComponent('données-ünïcode')}`);
    const unknownKey = await create(alice.token, { skillMd: '---\nname: extra-key\ndescription: x\nversion: "2"\n---\n' });
    // Assess
    expect(unicode.status, JSON.stringify(unicode.body)).toBe(201);
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(201);
    expect(quoted.body.data.skill.skillName).toBe('quoted-name');
    expect(bySlug.status, JSON.stringify(bySlug.body)).toBe(200);
    expect(bySlug.body.data.skillName ?? bySlug.body.data.skill?.skillName).toBe('données-ünïcode');
    // The answered rawUrl is a URL as given (its path percent-encoded), and serves the file.
    expect(unicode.body.data.skill.rawUrl).toMatch(/\/skills\/s\/alice\/donn%C3%A9es-%C3%BCn%C3%AFcode\/SKILL\.md$/);
    expect((await fetch(unicode.body.data.skill.rawUrl as string)).status).toBe(200);
    expect(unknownKey.status).toBe(400);
    expect(JSON.stringify(unknownKey.body)).toContain('(version)');
  });

  it('refuses a second skill of one name for one owner (409); another owner may use it', async () => {
    const text = skillMd('dup-name');
    expect((await create(alice.token, { skillMd: text })).status).toBe(201);
    expect((await create(alice.token, { skillMd: text })).status).toBe(409);
    const bobs = await create(bob.token, { skillMd: text });
    expect(bobs.status).toBe(201);
    expect(bobs.body.data.skill.slug).toBe('bob/dup-name');
  });

  it('lets exactly one of concurrent creates of one name win', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => create(alice.token, { skillMd: skillMd('raced-name') })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const listed = await platform.api('GET', '/skills/list?owner=alice&limit=100');
    expect(listed.body.data.skills.filter((s: { skillName: string }) => s.skillName === 'raced-name')).toHaveLength(1);
  });

  it('refuses a SKILL.md above 256 KB with 413 and accepts one at the limit', async () => {
    const head = skillMd('big-skill', 'Big', '');
    const atLimit = head + 'x'.repeat(256 * 1024 - Buffer.byteLength(head));
    expect((await create(alice.token, { skillMd: `${atLimit}x` })).status).toBe(413);
    const ok = await create(alice.token, { skillMd: atLimit });
    expect(ok.status).toBe(201);
    const raw = await platform.api('GET', '/skills/s/alice/big-skill/SKILL.md');
    expect(raw.text).toBe(atLimit);
  });

  it('serves the raw SKILL.md exactly, with cache headers, nosniff, an ETag and 304 on a match', async () => {
    const text = `---\nname: raw-skill\ndescription: Raw text\n---\n# Ünïcode body\n\r\n  trailing spaces  \n`;
    const { skillId } = (await create(alice.token, { skillMd: text })).body.data.skill;
    for (const path of [`/skills/${skillId}/SKILL.md`, '/skills/s/alice/raw-skill/SKILL.md']) {
      const res = await platform.api('GET', path);
      expect(res.status).toBe(200);
      expect(res.text).toBe(text);
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      // What users wrote: a browser must never sniff it into HTML.
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      const again = await platform.api('GET', path, { headers: { 'if-none-match': etag! } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const stale = await platform.api('GET', path, { headers: { 'if-none-match': '"other"' } });
      expect(stale.status).toBe(200);
    }
  });

  it("keeps a private skill to its owner: 404 for everyone else on every read, raw needs the owner's token", async () => {
    const text = skillMd('secret-skill');
    const { skillId } = (await create(alice.token, { skillMd: text, visibility: 'private' })).body.data.skill;
    const paths = [`/skills/${skillId}`, '/skills/s/alice/secret-skill', `/skills/${skillId}/SKILL.md`, '/skills/s/alice/secret-skill/SKILL.md'];
    for (const path of paths) {
      expect((await platform.api('GET', path)).status, path).toBe(404);
      expect((await platform.api('GET', path, { token: bob.token })).status, path).toBe(404);
      expect((await platform.api('GET', path, { token: alice.token })).status, path).toBe(200);
    }
    const raw = await platform.api('GET', `/skills/${skillId}/SKILL.md`, { token: alice.token });
    expect(raw.text).toBe(text);
    expect(raw.headers.get('cache-control')).toBe('private, max-age=300');
    expect((await platform.api('PUT', '/skills/update', { token: bob.token, body: { skillId, description: 'mine now' } })).status).toBe(404);
    expect((await platform.api('POST', '/skills/delete', { token: bob.token, body: { slug: 'alice/secret-skill' } })).status).toBe(404);
  });

  it('lists by visibility and owner: anonymous callers see public skills only, private is the caller own', async () => {
    const owner = await createUser(platform, { alias: 'lister' });
    await create(owner.token, { skillMd: skillMd('listed-public') });
    await create(owner.token, { skillMd: skillMd('listed-private'), visibility: 'private' });
    const names = (res: { body: { data: { skills: { skillName: string }[] } } }) => res.body.data.skills.map((s) => s.skillName).sort();

    const anonymous = await platform.api('GET', '/skills/list?owner=lister');
    expect(names(anonymous)).toEqual(['listed-public']);
    const anonymousAll = await platform.api('GET', '/skills/list?limit=100');
    expect(names(anonymousAll)).toContain('listed-public');
    expect(names(anonymousAll)).not.toContain('listed-private');
    expect(names(await platform.api('GET', '/skills/list?visibility=private', { token: owner.token }))).toEqual(['listed-private']);
    expect(names(await platform.api('GET', '/skills/list?visibility=all', { token: owner.token }))).toEqual(['listed-private', 'listed-public']);
    expect(names(await platform.api('GET', '/skills/list?owner=lister&visibility=private', { token: bob.token }))).toEqual([]);

    const first = await platform.api('GET', '/skills/list?visibility=all&limit=1', { token: owner.token });
    expect(first.body.data).toMatchObject({ count: 1 });
    expect(first.body.data.nextCursor).toEqual(expect.any(String));
    const second = await platform.api('GET', `/skills/list?visibility=all&limit=1&cursor=${encodeURIComponent(first.body.data.nextCursor)}`, {
      token: owner.token,
    });
    expect(second.body.data.skills[0].skillName).not.toBe(first.body.data.skills[0].skillName);
  });

  it('updates by id or slug, refuses a renaming SKILL.md, and frees the name at once on delete', async () => {
    const { skillId } = (await create(alice.token, { skillMd: skillMd('changing', 'First words') })).body.data.skill;
    const renamed = await platform.api('PUT', '/skills/update', { token: alice.token, body: { skillId, skillMd: skillMd('renamed') } });
    expect(renamed.status).toBe(400);
    expect(renamed.text).toContain('delete the skill and create it anew');

    const newText = skillMd('changing', 'Second words', '# v2\n');
    const updated = await platform.api('PUT', '/skills/update', { token: alice.token, body: { slug: 'alice/changing', skillMd: newText } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.skill.description).toBe('Second words');
    expect((await platform.api('GET', '/skills/s/alice/changing/SKILL.md')).text).toBe(newText);
    const onlyDescription = await platform.api('PUT', '/skills/update', { token: alice.token, body: { slug: 'changing', description: 'Third words' } });
    expect(onlyDescription.body.data.skill.description).toBe('Third words');
    expect((await platform.api('PUT', '/skills/update', { token: alice.token, body: { skillId } })).status).toBe(400);

    expect((await platform.api('POST', '/skills/delete', { token: alice.token, body: { slug: 'alice/changing' } })).status).toBe(200);
    expect((await platform.api('GET', `/skills/${skillId}`)).status).toBe(404);
    expect((await create(alice.token, { skillMd: skillMd('changing') })).status).toBe(201);
  });

  it('puts public skills in search (body text included) and takes them out when private or deleted', async () => {
    const text = skillMd('kayak-planner', 'Plans river trips', '# Kayak\n\nCheck the zephyrine tide tables before launching.\n');
    const { skillId } = (await create(alice.token, { skillMd: text })).body.data.skill;
    expect(await searchSkills('zephyrine')).toEqual([
      expect.objectContaining({ resourceId: skillId, resourceType: 'skill', name: 'kayak-planner', slug: 'alice/kayak-planner', owner: 'alice' }),
    ]);

    await platform.api('PUT', '/skills/update', { token: alice.token, body: { skillId, visibility: 'private' } });
    expect(await searchSkills('zephyrine')).toEqual([]);
    await platform.api('PUT', '/skills/update', { token: alice.token, body: { skillId, visibility: 'public' } });
    expect((await searchSkills('zephyrine')).map((r) => r.resourceId)).toEqual([skillId]);

    await platform.api('POST', '/skills/delete', { token: alice.token, body: { skillId } });
    expect(await searchSkills('zephyrine')).toEqual([]);

    await create(alice.token, { skillMd: skillMd('hidden-kayak', 'Quillback river notes'), visibility: 'private' });
    expect(await searchSkills('quillback')).toEqual([]);
  });

  it('requires a signed-in caller with an alias to create', async () => {
    expect((await platform.api('POST', '/skills/create', { body: { skillMd: skillMd('anon') } })).status).toBe(401);
  });
});
