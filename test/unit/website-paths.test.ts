/** Paths of users' sites: what clients may name (relative to their own site) and how invalidation paths are scoped. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../functions/core/errors.ts';
import { siteFolderFromClient, siteObjectKey, sitePathFromClient } from '../../functions/websites/websites-paths.ts';
import { scopedInvalidationPath } from '../../functions/websites/websites.service.ts';

describe('site paths from clients', () => {
  it('reads keys and folders relative to the caller’s site, normalised', () => {
    // Act
    const nested = sitePathFromClient('key', 'about/team/index.html');
    const root = sitePathFromClient('key', 'index.html');
    const folder = siteFolderFromClient('folder', 'assets/img');

    // Assess
    expect(nested).toEqual({ folder: 'about/team/', fileName: 'index.html' });
    expect(root).toEqual({ folder: '', fileName: 'index.html' });
    expect(folder).toBe('assets/img/');
    expect(siteObjectKey('usr_1', 'about/index.html')).toBe('sites/usr_1/about/index.html');
    expect(sitePathFromClient('key', 'cafe\u0301.html').fileName).toBe('café.html');
  });

  it.each([
    ['../x.html'],
    ['a/../../x.html'],
    ['/etc/passwd'],
    ['a\\b.html'],
    ['a\u0000b.html'],
    ['a\u001fb.html'],
    ['%2e%2e/x.html'],
    ['a/%2E%2E/x.html'],
    ['a%2fb.html'],
    ['a//b.html'],
    ['./x.html'],
    ['folder/'],
  ])('refuses %j with 400', (key) => {
    // Act
    const attempt = () => sitePathFromClient('key', key);

    // Assess
    expect(attempt).toThrow(ValidationError);
  });

  it.each([['../x'], ['/abs'], ['a\\b'], ['%2e%2e'], ['a//b']])('refuses the folder %j with 400', (folder) => {
    // Assess
    expect(() => siteFolderFromClient('folder', folder)).toThrow(ValidationError);
  });
});

describe('invalidation paths', () => {
  it("scopes every path under the caller's /{alias}/, folders to their index.html, keeping a final wildcard", () => {
    // Assess
    expect(scopedInvalidationPath('alice', '/*')).toBe('/alice/*');
    expect(scopedInvalidationPath('alice', '/')).toBe('/alice/index.html');
    expect(scopedInvalidationPath('alice', 'about/')).toBe('/alice/about/index.html');
    expect(scopedInvalidationPath('alice', '/docs/*')).toBe('/alice/docs/*');
    expect(scopedInvalidationPath('alice', '/a b.html')).toBe('/alice/a%20b.html');
  });

  it.each([['/../bob/*'], ['/a/../../bob/x'], ['/a*/b'], ['/%2e%2e/bob/*'], ['/a\\b'], ['/a\u0007']])('refuses %j with 400', (path) => {
    // Assess
    expect(() => scopedInvalidationPath('alice', path)).toThrow(ValidationError);
  });
});
