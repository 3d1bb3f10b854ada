import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Credits } from '../core/credits.ts';
import type { Logger } from '../core/logger.ts';
import type { McpServerStore } from '../mcp/mcp.store.ts';
import type { BillingStore } from './billing.store.ts';
import type { StripeGateway } from './stripe-client.ts';

/** What the billing use cases are handed. */
export interface BillingPorts {
  readonly billing: BillingStore;
  readonly stripe: StripeGateway;
  readonly credits: Credits;
  readonly mcpServers: McpServerStore;
  readonly clock: Clock;
  readonly log: Logger;
  readonly config: Config;
}
