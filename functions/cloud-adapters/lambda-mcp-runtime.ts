import { LambdaClient } from '@aws-sdk/client-lambda';
import { ConfigError, type Config } from '../core/config.ts';
import { createLambdaMcpRuntime } from '../runtimes/mcp-lambda-runtime.ts';
import type { McpRuntime } from '../runtimes/mcp-runtime.ts';

/** The `mcpRuntime` port in the cloud: the MCP runtime Lambda, named by MCP_RUNTIME_FUNCTION_NAME. */
export function lambdaMcpRuntime(config: Config): McpRuntime {
  if (!config.MCP_RUNTIME_FUNCTION_NAME)
    throw new ConfigError('Invalid platform configuration: MCP_RUNTIME_FUNCTION_NAME: is required in the cloud to run MCP servers');
  return createLambdaMcpRuntime({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.MCP_RUNTIME_FUNCTION_NAME });
}
