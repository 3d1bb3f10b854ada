/**
 * The `agentRuns` port's cloud adapter and the agents function's dispatch, end to end through the
 * real AWS SDK: the adapter's Invoke goes to a loopback stand-in speaking Lambda's Invoke API
 * (`POST /2015-03-31/functions/{name}/invocations`; the answer's body is the handler's result,
 * `X-Amz-Function-Error` when it threw), which hands the payload to a handler made by
 * functions/cloud.ts's `areaHandler`, as Lambda would. moto runs Lambda functions only in Docker,
 * which this machine lacks, so the stand-in is the function's side.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunRequest, AgentRunResult } from '../../functions/agents/agent-runs.ts';
import { restEvent } from '../support/rest-event.ts';

const AREA_ENV = { STAGE: 'test', TABLE_PREFIX: 'unit-', BUCKET_PREFIX: 'unit-', LOG_LEVEL: 'silent', AWS_REGION: 'us-east-1' };

type Handler = (event: unknown) => Promise<unknown>;

/** Lambda's Invoke API on loopback: each function name answered by a handler, as RequestResponse invokes are. */
async function startLambdaStandIn(functions: Readonly<Record<string, Handler>>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const name = decodeURIComponent(/^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url ?? '')?.[1] ?? '');
      const handler = functions[name];
      if (req.method !== 'POST' || handler === undefined || req.headers['x-amz-invocation-type'] !== 'RequestResponse') {
        res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' });
        res.end(JSON.stringify({ Type: 'User', message: `Function not found: ${name}` }));
        return;
      }
      handler(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown).then(
        (result) => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
          res.end(JSON.stringify(result));
        },
        (error: unknown) => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', 'x-amz-function-error': 'Unhandled' });
          res.end(JSON.stringify({ errorType: 'Error', errorMessage: String(error) }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('agent runs through the Lambda Invoke API', () => {
  const saved = { ...process.env };
  const served: AgentRunEvent[] = [];
  let standIn: { url: string; server: Server };
  let lambda: LambdaClient;

  beforeAll(async () => {
    // Only what a cloud function receives: none of the developer's local settings.
    for (const name of ['BASE_URL', 'STREAM_URL', 'MCP_URL', 'VOICE_URL', 'CDN_URL', 'SITE_URL', 'CODE_URL', 'DYNAMODB_ENDPOINT', 'S3_ENDPOINT'])
      delete process.env[name];
    Object.assign(process.env, AREA_ENV);
    const { areaHandler } = await import('../../functions/cloud.ts');
    const { defineArea } = await import('../../lib/manifest/define.ts');
    const agents = defineArea({ name: 'agents-stand-in' });
    const other = defineArea({ name: 'other' });
    // The agents function's entry passes its server; any other area's does not.
    const agentsFunction = areaHandler('agents-stand-in', [agents], {}, {}, async (event) => {
      served.push(event);
      const request = event.platformAgentRun;
      if (request.prompt === 'refuse') return { ok: false, code: 'INSUFFICIENT_CREDITS', message: 'No credits.', status: 402 };
      if (request.prompt === 'crash') throw new Error('the function failed');
      return { ok: true, reply: `ran ${request.agentId} for ${request.ownerId}: ${request.prompt}`, conversationId: request.conversationId ?? 'conv-new' };
    });
    standIn = await startLambdaStandIn({ 'agents-fn': agentsFunction as Handler, 'other-fn': areaHandler('other', [other], {}, {}) as Handler });
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: standIn.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  });
  afterAll(async () => {
    process.env = saved;
    lambda?.destroy();
    await new Promise((resolve) => standIn?.server.close(resolve));
  });

  it('carries the request to the agents function and its answer back, before any HTTP routing', async () => {
    // Prepare
    const { createLambdaAgentRuns } = await import('../../functions/adapters/agent-runs/aws.ts');
    const runs = createLambdaAgentRuns({ lambda, functionName: 'agents-fn' });
    const request: AgentRunRequest = {
      ownerId: 'user-1',
      agentId: 'agent-1',
      prompt: 'hello',
      conversationId: 'conv-1',
      lineage: 'root=r1;parent=p1',
      baseUrl: 'https://api.example.test/prod',
    };

    // Act
    const answered = await runs.run(request);
    const refused = await runs.run({ ...request, prompt: 'refuse' });

    // Assess
    expect(served[0]).toEqual({ platformAgentRun: request });
    expect(answered).toEqual<AgentRunResult>({ ok: true, reply: 'ran agent-1 for user-1: hello', conversationId: 'conv-1' });
    expect(refused).toEqual<AgentRunResult>({ ok: false, code: 'INSUFFICIENT_CREDITS', message: 'No credits.', status: 402 });
  });

  it('answers a run the function could not finish, or could not be reached for, as a failed run', async () => {
    // Prepare
    const { createLambdaAgentRuns } = await import('../../functions/adapters/agent-runs/aws.ts');
    const request = { ownerId: 'user-1', agentId: 'agent-1', prompt: 'crash', lineage: 'root=r1;parent=p1' };

    // Act
    const crashed = await createLambdaAgentRuns({ lambda, functionName: 'agents-fn' }).run(request);
    const elsewhere = await createLambdaAgentRuns({ lambda, functionName: 'other-fn' }).run({ ...request, prompt: 'hello' });
    const missing = await createLambdaAgentRuns({ lambda, functionName: 'no-such-fn' }).run({ ...request, prompt: 'hello' });

    // Assess
    expect(crashed).toMatchObject({ ok: false, code: 'AGENT_RUN_FAILED', status: 502 });
    // A function without the server refuses the event rather than routing it as HTTP.
    expect(elsewhere).toMatchObject({ ok: false, code: 'AGENT_RUN_FAILED' });
    expect(missing).toMatchObject({ ok: false, code: 'AGENT_RUN_UNAVAILABLE', status: 503 });
  });

  it('still routes API Gateway events of the same function as HTTP', async () => {
    // Prepare
    const { areaHandler } = await import('../../functions/cloud.ts');
    const { defineArea } = await import('../../lib/manifest/define.ts');
    const handler = areaHandler('agents-stand-in', [defineArea({ name: 'agents-stand-in' })], {}, {}, () => Promise.reject(new Error('not a run')));

    // Act
    const answer = await handler(restEvent({ resource: '/nowhere' }));

    // Assess
    expect(answer.statusCode).toBe(404);
  });

  it('refuses a malformed run event without touching the platform', async () => {
    // Prepare
    const { serveAgentRun } = await import('../../functions/agents/agent-runs.service.ts');

    // Act
    const answer = await serveAgentRun({ platformAgentRun: { ownerId: 'u', prompt: 42 } }, {} as never);

    // Assess
    expect(answer).toMatchObject({ ok: false, code: 'INVALID_PARAMETERS', status: 400 });
  });
});
