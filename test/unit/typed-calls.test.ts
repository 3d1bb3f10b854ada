/**
 * The typed calls of recorded traffic (test/support/typed-calls.ts) can fail: against the committed
 * OpenAPI document and the client generated from it, a call with a body field of the wrong type and
 * an answer with a field the document lacks are diagnostics, each named by its recorded call, while
 * conforming calls are not; requests the document does not describe are listed, not typed.
 */
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callLabel, typedCallsSource, typeErrorsOf, type RecordedExchange } from '../support/typed-calls.ts';

const documentFile = fileURLToPath(new URL('../../clients/typescript/openapi.json', import.meta.url));
/** Under .tmp/, one per process (runs side by side keep theirs); kept when the test fails. */
const sourceFile = fileURLToPath(new URL(`../../.tmp/typed-calls/unit-sample-${process.pid}.ts`, import.meta.url));

/** An exchange as the recording proxy keeps it: JSON in both directions unless told otherwise. */
function exchange(method: string, url: string, status: number, answer: unknown, request?: unknown, requestContentType = 'application/json'): RecordedExchange {
  const requestBody = request === undefined ? Buffer.alloc(0) : Buffer.from(typeof request === 'string' ? request : JSON.stringify(request));
  return {
    method,
    url,
    requestContentType: request === undefined ? '' : requestContentType,
    requestBody,
    status,
    contentType: answer === undefined ? '' : 'application/json; charset=utf-8',
    body: answer === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(answer)),
  };
}

const lineage = { requestId: 'r-1', rootRequestId: 'r-1', parentRequestId: null };

describe('typed calls of recorded traffic', () => {
  it('names the call whose body field has the wrong type and the answer with an undocumented field; conforming calls pass', async () => {
    // Prepare
    const document = JSON.parse(await readFile(documentFile, 'utf8')) as Record<string, unknown>;
    const wrongBody = exchange(
      'POST',
      'http://localhost:8787/agent/create',
      400,
      { success: false, error: { code: 'INVALID_REQUEST', message: 'sourceCode: expected string' }, requestId: 'r-1' },
      { agentName: 'echo', description: 'Echoes', sourceCode: 42 },
    );
    const undocumentedField = exchange('GET', 'http://localhost:8787/keys/check/openai', 200, {
      data: { serviceName: 'openai', exists: true, hint: 'sk-...0000' },
      ...lineage,
    });
    const conforming = [
      exchange('GET', 'http://localhost:8787/keys/check/openai', 200, { data: { serviceName: 'openai', exists: true }, ...lineage }),
      // Query values arrive as text; `limit` is an integer by the document, so it is written as one.
      exchange('GET', 'http://localhost:8787/knowledge/list?prefix=notes&limit=50', 200, undefined),
    ];
    const storageUpload = exchange('PUT', 'http://127.0.0.1:9000/knowledge/incoming/report.txt', 200, undefined, 'Quarterly report', 'text/plain');
    const textBody = exchange('POST', 'http://localhost:8787/knowledge/upload', 400, undefined, 'not json', 'text/plain');
    const undescribed = exchange('GET', 'http://localhost:8787/no/such/route', 404, undefined);

    // Act
    const source = typedCallsSource(document, [wrongBody, undocumentedField, ...conforming, storageUpload, textBody, undescribed], sourceFile);
    const diagnostics = await typeErrorsOf(source);

    // Assess
    expect(diagnostics.map((d) => [d.call, d.part])).toEqual([
      [callLabel(wrongBody), 'call'],
      [callLabel(undocumentedField), 'answer'],
    ]);
    expect(diagnostics[0]?.message).toBe("Type 'number' is not assignable to type 'string'.");
    expect(diagnostics[1]?.message).toMatch(/^Object literal may only specify known properties, and '"hint"' does not exist/);
    expect(source.typed.map(({ exchange: e }) => e)).toEqual([wrongBody, undocumentedField, ...conforming]);
    expect(source.skipped.map(({ exchange: e, reason }) => [e, reason])).toEqual([
      [storageUpload, 'http://127.0.0.1:9000 is not a host of the document'],
      [textBody, 'its body is not JSON (text/plain)'],
    ]);
    expect(source.unmatched).toEqual([undescribed]);
    await rm(sourceFile);
  });
});
