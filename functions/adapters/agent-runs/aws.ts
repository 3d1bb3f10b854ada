import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { AGENT_RUN_TIMEOUT_SEC, type AgentRunEvent, type AgentRunResult, type AgentRuns } from '../../agents/agent-runs.ts';
import { ConfigError, type Config } from '../../core/config.ts';

/**
 * How long a caller waits for the agents function: longer than that function may run (its run
 * stops at AGENT_RUN_TIMEOUT_SEC, Lambda stops it a few seconds later), so the answer, or Lambda's
 * own timeout error, always comes back before the client gives up.
 */
export const AGENT_RUN_INVOKE_TIMEOUT_MS = (AGENT_RUN_TIMEOUT_SEC + 15) * 1000;

/** The `agentRuns` port in the cloud: the agents function, named by AGENT_RUNS_FUNCTION_NAME (only functions granted it receive it). */
export function lambdaAgentRuns(config: Config): AgentRuns {
  if (!config.AGENT_RUNS_FUNCTION_NAME) throw new ConfigError('Invalid platform configuration: AGENT_RUNS_FUNCTION_NAME: is required in the cloud');
  const lambda = new LambdaClient({
    region: config.AWS_REGION,
    // A run holds the connection for minutes: the handler's defaults would give up (or never) on their own terms.
    requestHandler: { requestTimeout: AGENT_RUN_INVOKE_TIMEOUT_MS, connectionTimeout: 10_000 },
  });
  return createLambdaAgentRuns({ lambda, functionName: config.AGENT_RUNS_FUNCTION_NAME });
}

/**
 * Invokes the agents function (RequestResponse) with an `AgentRunEvent`, which functions/cloud.ts
 * hands to the chat service before any HTTP routing: one Lambda API call, no public endpoint, no
 * credential, no SSE. A run the function could not finish (it threw, or Lambda stopped it) and a
 * failed call answer as failed runs, never as exceptions, as the port promises.
 */
export function createLambdaAgentRuns(options: { readonly lambda: LambdaClient; readonly functionName: string }): AgentRuns {
  return {
    async run(request, signal) {
      const event: AgentRunEvent = { platformAgentRun: request };
      let answer;
      try {
        answer = await options.lambda.send(
          new InvokeCommand({ FunctionName: options.functionName, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(event)) }),
          signal === undefined ? {} : { abortSignal: signal },
        );
      } catch {
        return {
          ok: false,
          code: 'AGENT_RUN_UNAVAILABLE',
          message: 'The agent could not be run: the platform is busy or unreachable; try again.',
          status: 503,
        };
      }
      const text = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
      const result = answer.FunctionError === undefined ? parseResult(text) : null;
      return result ?? { ok: false, code: 'AGENT_RUN_FAILED', message: 'The agent run did not complete.', status: 502 };
    },
  };
}

function parseResult(text: string): AgentRunResult | null {
  try {
    const value = JSON.parse(text) as Partial<Record<keyof AgentRunResult | 'reply' | 'code' | 'message' | 'status' | 'conversationId', unknown>>;
    if (value.ok === true && typeof value.reply === 'string' && typeof value.conversationId === 'string')
      return { ok: true, reply: value.reply, conversationId: value.conversationId };
    if (value.ok === false && typeof value.code === 'string' && typeof value.message === 'string' && typeof value.status === 'number')
      return { ok: false, code: value.code, message: value.message, status: value.status };
    return null;
  } catch {
    return null;
  }
}
