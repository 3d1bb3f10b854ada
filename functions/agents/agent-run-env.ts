/**
 * The environment of every agent run, text chat and voice alike. Apart from the chat service so the
 * voice area can give its sessions the same environment without bundling the chat.
 */
import type { PublicUrls } from '../core/http/public-urls.ts';
import { platformMcpUrl } from '../platform-tools/platform-mcp-url.ts';

/**
 * Stored keys that reach a run as the model providers' standard variables, so each provider's
 * client finds its key as it would anywhere (Strands' OpenAIModel, AnthropicModel, GeminiModel).
 */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<string, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
};

/**
 * What every agent run's environment holds: the owner's keys (as `SVC_KEYS_JSON` and, for model
 * providers, the variables their clients read), the region (botocore reads AWS_DEFAULT_REGION
 * only), the agent's id and the platform MCP server's address.
 */
export function agentRunEnv(keys: Readonly<Record<string, string>>, agentId: string, urls: PublicUrls, region: string): Record<string, string> {
  return {
    SVC_KEYS_JSON: JSON.stringify(keys),
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    ...modelCredentials(keys),
    SVC_AGENT_ID: agentId,
    SVC_PLATFORM_MCP_URL: platformMcpUrl(urls),
  };
}

/**
 * Model-provider credentials for the run: an owner who stored keys named `aws_access_key_id` and
 * `aws_secret_access_key` (optionally `aws_session_token`, `aws_region`) gets them as the standard
 * AWS variables, so Strands' BedrockModel finds them; keys named `openai`, `anthropic` and
 * `gemini` arrive as PROVIDER_KEY_VARIABLES name them. The platform's own credentials never reach
 * user code; without these keys a Bedrock call fails with AWS_CREDENTIALS_REQUIRED. Every value is
 * a secret of the run: none of these names is in PUBLIC_RUN_ENV, so they are scrubbed from what
 * it prints.
 */
export function modelCredentials(keys: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, variable] of Object.entries(PROVIDER_KEY_VARIABLES)) {
    const value = keys[name];
    if (value) out[variable] = value;
  }
  const id = keys['aws_access_key_id'];
  const secret = keys['aws_secret_access_key'];
  if (!id || !secret) return out;
  return {
    ...out,
    AWS_ACCESS_KEY_ID: id,
    AWS_SECRET_ACCESS_KEY: secret,
    ...(keys['aws_session_token'] ? { AWS_SESSION_TOKEN: keys['aws_session_token'] } : {}),
    ...(keys['aws_region'] ? { AWS_REGION: keys['aws_region'], AWS_DEFAULT_REGION: keys['aws_region'] } : {}),
  };
}
