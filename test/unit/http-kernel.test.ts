import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../functions/core/config.ts';
import { ConflictError, InsufficientCreditsError, MethodNotAllowedError, RateLimitedError, ValidationError } from '../../functions/core/errors.ts';
import { errorBody, successBody } from '../../functions/core/http/envelope.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import { childLineageHeader, lineageOf } from '../../functions/core/http/lineage.ts';
import { RouteTable } from '../../functions/core/http/route-table.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { areas } from '../../lib/manifest/areas.ts';

describe('envelopes', () => {
  const lineage = lineageOf('req-1', undefined);

  it('shapes success bodies in styles A, B and website', () => {
    expect(successBody('B', { a: 1 }, lineage)).toEqual({ data: { a: 1 }, requestId: 'req-1', rootRequestId: 'req-1', parentRequestId: null });
    expect(successBody('A', { a: 1 }, lineage)).toEqual({ success: true, data: { a: 1 } });
    expect(successBody('A', { a: 1 }, lineage, { requestId: 'req-1' })).toEqual({ success: true, data: { a: 1 }, meta: { requestId: 'req-1' } });
    expect(successBody('website', { a: 1 }, lineage)).toEqual(successBody('B', { a: 1 }, lineage));
  });

  it('shapes error bodies in styles A, B and website', () => {
    expect(errorBody('A', 'AGENT_NOT_FOUND', 'nope', lineage)).toEqual({
      success: false,
      error: { code: 'AGENT_NOT_FOUND', message: 'nope' },
      requestId: 'req-1',
    });
    expect(errorBody('B', 'NOT_FOUND', 'nope', lineage)).toMatchObject({ error: 'nope', code: 'NOT_FOUND', requestId: 'req-1' });
    expect(errorBody('website', 'NOT_FOUND', 'nope', lineage)).toEqual({ error: 'nope' });
  });
});

describe('error mapping', () => {
  it('maps each failure kind to its status, code and headers in one place', () => {
    expect(toErrorResponse(new ValidationError('Invalid request body', ['a: is required', 'b: too big']))).toMatchObject({
      status: 400,
      code: 'INVALID_PARAMETERS',
      message: 'Invalid request body: a: is required; b: too big',
    });
    expect(toErrorResponse(new InsufficientCreditsError(5, 1))).toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
    expect(toErrorResponse(new ConflictError('taken'))).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(toErrorResponse(new RateLimitedError(12)).headers).toEqual({ 'retry-after': '12' });
    expect(toErrorResponse(new MethodNotAllowedError('PUT', ['GET', 'POST'])).headers).toEqual({ allow: 'GET, POST' });
    expect(toErrorResponse(new ConflictError('x', 'ALIAS_TAKEN')).code).toBe('ALIAS_TAKEN');
  });

  it('hides unexpected errors behind a generic 500', () => {
    const failure = toErrorResponse(new TypeError('Cannot read properties of undefined (reading "x") at /srv/app.ts:12'));
    expect(failure).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', message: 'Internal server error.', expected: false });
  });
});

describe('lineage', () => {
  it('starts a chain at the request itself and carries it through platform calls', () => {
    const direct = lineageOf('a', undefined);
    expect(direct).toEqual({ requestId: 'a', rootRequestId: 'a', parentRequestId: null, parentConversationId: null, parentAgentId: null });
    const child = lineageOf('b', childLineageHeader(direct, { conversationId: 'c1', agentId: 'ag1' }));
    expect(child).toEqual({ requestId: 'b', rootRequestId: 'a', parentRequestId: 'a', parentConversationId: 'c1', parentAgentId: 'ag1' });
    const grandchild = lineageOf('c', childLineageHeader(child));
    expect(grandchild).toMatchObject({ rootRequestId: 'a', parentRequestId: 'b' });
  });

  it('ignores malformed parts', () => {
    expect(lineageOf('x', 'root=ok;parent=has space;agent=' + 'z'.repeat(200))).toMatchObject({
      rootRequestId: 'ok',
      parentRequestId: null,
      parentAgentId: null,
    });
  });
});

describe('route table', () => {
  const table = new RouteTable([
    { method: 'GET' as const, path: '/user/token/list' },
    { method: 'GET' as const, path: '/user/token/{tokenId}' },
    { method: 'POST' as const, path: '/user/token/{tokenId}/regenerate' },
    { method: 'PUT' as const, path: '/user/alias' },
    { method: 'POST' as const, path: '/user/alias' },
  ]);

  it('prefers literal segments over parameters', () => {
    expect(table.match('GET', '/user/token/list')).toMatchObject({ kind: 'found', route: { path: '/user/token/list' }, params: {} });
    expect(table.match('GET', '/user/token/tok_1')).toMatchObject({ kind: 'found', params: { tokenId: 'tok_1' } });
    expect(table.match('POST', '/user/token/a%2Fb/regenerate')).toMatchObject({ kind: 'found', params: { tokenId: 'a/b' } });
  });

  it('tells a wrong method from an unknown path', () => {
    expect(table.match('DELETE', '/user/alias')).toEqual({ kind: 'wrong-method', allowed: ['POST', 'PUT'] });
    expect(table.match('GET', '/user/nothing')).toEqual({ kind: 'none' });
    expect(table.match('GET', '/user/token/%E0%A4%A')).toEqual({ kind: 'none' });
  });

  it('gives a last {rest+} the rest of the path, still encoded, after literal and {param} routes', () => {
    // Prepare
    const withRest = new RouteTable([
      { method: 'GET' as const, path: '/files/list' },
      { method: 'GET' as const, path: '/files/{id}' },
      { method: 'GET' as const, path: '/files/{path+}' },
      { method: 'GET' as const, path: '/{site+}' },
    ]);

    // Act
    const literal = withRest.match('GET', '/files/list');
    const param = withRest.match('GET', '/files/f1');
    const rest = withRest.match('GET', '/files/a/b%20c/d.txt');
    const top = withRest.match('GET', '/alice/docs/');

    // Assess
    expect(literal).toMatchObject({ kind: 'found', route: { path: '/files/list' } });
    expect(param).toMatchObject({ kind: 'found', params: { id: 'f1' } });
    expect(rest).toMatchObject({ kind: 'found', route: { path: '/files/{path+}' }, params: { path: 'a/b%20c/d.txt' } });
    expect(top).toMatchObject({ kind: 'found', route: { path: '/{site+}' }, params: { site: 'alice/docs' } });
    expect(withRest.match('GET', '/')).toEqual({ kind: 'none' });
  });

  it('answers HEAD with a GET route unless a HEAD route exists', () => {
    // Assess
    expect(table.match('HEAD', '/user/token/list')).toMatchObject({ kind: 'found', route: { method: 'GET', path: '/user/token/list' } });
    expect(table.match('HEAD', '/user/alias')).toEqual({ kind: 'wrong-method', allowed: ['POST', 'PUT'] });
  });

  it('refuses duplicate routes', () => {
    expect(
      () =>
        new RouteTable([
          { method: 'GET', path: '/a' },
          { method: 'GET', path: '/a' },
        ]),
    ).toThrow(/Duplicate/);
  });
});

describe('logger', () => {
  it('redacts secret fields and token-shaped values at any depth', () => {
    const lines: string[] = [];
    const log = createLogger('info', { service: 't' }, (l) => lines.push(l));
    log.info('hello', { authorization: 'Bearer abc', nested: { apiKey: 'k', ok: 'svc_ut_ABCDEFGHIJ and text' }, hasToken: true });
    log.debug('hidden');
    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ level: 'info', message: 'hello', service: 't', authorization: '[REDACTED]', hasToken: true });
    expect(record.nested).toEqual({ apiKey: '[REDACTED]', ok: 'svc_ut_[REDACTED] and text' });
  });
});

describe('config', () => {
  it('fails fast naming every bad variable', () => {
    expect(() => parseConfig({ TABLE_PREFIX: '', DYNAMODB_ENDPOINT: 'not a url' }, areas)).toThrow(ConfigError);
    expect(() => parseConfig({ TABLE_PREFIX: '', DYNAMODB_ENDPOINT: 'not a url' }, areas)).toThrow(
      /TABLE_PREFIX.*DYNAMODB_ENDPOINT|DYNAMODB_ENDPOINT.*TABLE_PREFIX/,
    );
    expect(() => parseConfig({ TABLE_PREFIX: 'p-' }, areas)).toThrow(/BUCKET_PREFIX/);
  });

  it('applies defaults', () => {
    const config = parseConfig({ TABLE_PREFIX: 'p-', BUCKET_PREFIX: 'b-' }, areas);
    expect(config).toMatchObject({ STAGE: 'local', AWS_REGION: 'us-east-1', LOG_LEVEL: 'info', USAGE_LOG_RETENTION_DAYS: 30 });
  });
});

describe('secret scope', () => {
  it('scrubs values handed out in the current request from logs, and only there', async () => {
    // Prepare
    const { registerSecret, withSecretScope } = await import('../../functions/core/secret-scope.ts');
    const { redact } = await import('../../functions/core/logger.ts');
    // Act
    const inside = await withSecretScope(async () => {
      registerSecret('sk-abcdef123');
      registerSecret('tiny');
      return redact({ note: 'key is sk-abcdef123!', nested: ['sk-abcdef123'], short: 'tiny' });
    });
    const outside = redact({ note: 'key is sk-abcdef123!' });
    // Assess
    expect(inside).toEqual({ note: 'key is [REDACTED]!', nested: ['[REDACTED]'], short: 'tiny' });
    expect(outside).toEqual({ note: 'key is sk-abcdef123!' });
  });
});
