import { describe, expect, it } from 'vitest';
import { MalformedJsonError, NotFoundError, RateLimitedError, TimeoutError, UpstreamError } from '../../functions/core/errors.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import { JSON_RPC_ERROR, jsonRpcErrorBody, jsonRpcRequestId } from '../../functions/core/http/json-rpc-error.ts';

const body = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('platform refusals as JSON-RPC errors', () => {
  it.each([
    [new MalformedJsonError('not JSON'), JSON_RPC_ERROR.parseError, 'MALFORMED_JSON'],
    [new NotFoundError('no such version', 'MCP_VERSION_NOT_FOUND'), JSON_RPC_ERROR.notFound, 'MCP_VERSION_NOT_FOUND'],
    [new UpstreamError('the MCP runtime is unavailable', 'RUNTIME_UNAVAILABLE'), JSON_RPC_ERROR.unavailable, 'RUNTIME_UNAVAILABLE'],
    [new TimeoutError('too slow'), JSON_RPC_ERROR.timeout, 'TIMEOUT'],
    [new Error('a bug'), JSON_RPC_ERROR.internalError, 'INTERNAL_ERROR'],
  ])('maps %s to its code, keeping the platform code in data', (error, code, platformCode) => {
    const failure = toErrorResponse(error);
    expect(jsonRpcErrorBody(failure, body({ jsonrpc: '2.0', id: 3, method: 'tools/list' }))).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code, message: failure.message, data: { code: platformCode } },
    });
  });

  it('keeps codes inside the server-error range for platform conditions', () => {
    const platformCodes = Object.entries(JSON_RPC_ERROR).filter(([name]) => !['parseError', 'invalidRequest', 'invalidParams', 'internalError'].includes(name));
    for (const [, code] of platformCodes) expect(code <= -32000 && code >= -32099).toBe(true);
    expect(new Set(Object.values(JSON_RPC_ERROR)).size).toBe(Object.keys(JSON_RPC_ERROR).length);
    expect(jsonRpcErrorBody(toErrorResponse(new RateLimitedError(30)), null).error.code).toBe(JSON_RPC_ERROR.rateLimited);
  });

  it('answers with the request id only for a single request that has one', () => {
    expect(jsonRpcRequestId(body({ jsonrpc: '2.0', id: 'a', method: 'x' }))).toBe('a');
    expect(jsonRpcRequestId(body({ jsonrpc: '2.0', id: 0, method: 'x' }))).toBe(0);
    expect(jsonRpcRequestId(body({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBeNull();
    expect(jsonRpcRequestId(body([{ jsonrpc: '2.0', id: 1, method: 'x' }]))).toBeNull();
    expect(jsonRpcRequestId(body({ id: { nested: true } }))).toBeNull();
    expect(jsonRpcRequestId(Buffer.from('{"id": 1'))).toBeNull();
    expect(jsonRpcRequestId(null)).toBeNull();
  });
});
