import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { billingSettings } from './billing.settings.ts';
import { createBillingStore, type BillingStore, type PaidAccessStore } from './billing.store.ts';
import type { KernelPorts } from '../ports.ts';
import { createStripeGateway, stripeLibraryFiles, type StripeGateway } from './stripe-client.ts';

/**
 * Plans and subscriptions with Stripe, paid MCP servers' subscriptions and their authors' earnings
 * (SPEC 4.4's subscription routes, 4.14's subscription and author rows; issue 35). The plans
 * themselves are defined in functions/core/plans.ts; the paid-server rule the MCP endpoint applies
 * is paid-access.ts.
 */
export const billingArea = defineArea({
  name: 'billing',
  routes: [
    // The caller's plan (SPEC 4.14).
    { method: 'GET', path: '/user/subscription', handler: 'get-user-subscription', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/subscription/checkout', handler: 'create-checkout', auth: 'required' },
    { method: 'POST', path: '/subscription/portal', handler: 'create-portal', auth: 'required' },
    // Stripe's events (a platform extra): no user auth, the signature over the raw body instead.
    { method: 'POST', path: '/stripe/webhook', handler: 'stripe-webhook', auth: 'public', maxBodyBytes: 512 * 1024 },
    // Subscriptions to paid MCP servers (SPEC 4.4).
    { method: 'POST', path: '/resources/{resourceId}/subscribe', handler: 'subscribe-resource', auth: 'required' },
    { method: 'GET', path: '/resources/{resourceId}/subscription', handler: 'get-resource-subscription', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/resources/{resourceId}/subscription/cancel', handler: 'cancel-resource-subscription', auth: 'required' },
    // The author dashboard (SPEC 4.14).
    { method: 'GET', path: '/author/earnings', handler: 'get-earnings', auth: 'required' },
    { method: 'GET', path: '/author/resources', handler: 'list-author-resources', auth: 'required' },
    { method: 'POST', path: '/author/stripe/connect', handler: 'stripe-connect', auth: 'required' },
    { method: 'GET', path: '/author/stripe/status', handler: 'stripe-status', auth: 'required' },
    { method: 'POST', path: '/author/stripe/dashboard', handler: 'stripe-dashboard', auth: 'required' },
    { method: 'GET', path: '/author/payouts/history', handler: 'payout-history', auth: 'required' },
    { method: 'POST', path: '/author/payouts/process', handler: 'process-payout', auth: 'required' },
  ],
  tables: [
    // Per user: the Stripe customer and connected account, each created once (the key claimed first).
    { name: 'billing-accounts', partitionKey: 'userId' },
    // Per user and subject (`plan`, `mcp#<serverId>`); `bySubject` lists a paid server's subscribers.
    { name: 'billing-subscriptions', partitionKey: 'userId', sortKey: 'subject', indexes: [{ name: 'bySubject', partitionKey: 'subject', sortKey: 'userId' }] },
    // One item per Stripe event id: processed once.
    { name: 'billing-events', partitionKey: 'eventId' },
    // The append-only money ledger, per author, in cents: earnings, payouts, reversals.
    { name: 'money-ledger', partitionKey: 'authorId', sortKey: 'entryId' },
    // Free-trial calls used, per paid server and caller (one conditional ADD per request).
    { name: 'mcp-trials', partitionKey: 'serverId', sortKey: 'callerId' },
  ],
  provides: {
    billing: providePort(
      { tables: ['billing-accounts', 'billing-subscriptions', 'billing-events', 'money-ledger', 'mcp-trials'] },
      ({ db, clock }): BillingStore => createBillingStore(db, clock),
    ),
    // The MCP endpoint's part (paid-access.ts): only the tables the paid-server rule reads and writes.
    paidAccess: providePort({ tables: ['billing-subscriptions', 'mcp-trials'] }, ({ db, clock }): PaidAccessStore => createBillingStore(db, clock)),
    stripe: providePort<StripeGateway>({}, (kernel: KernelPorts): StripeGateway => createStripeGateway(kernel.config)),
  },
  uses: ['credits', 'mcpServers'],
  settings: billingSettings,
  // The Stripe library, loaded at run time beside the bundle (stripe-client.ts).
  runtimeFiles: stripeLibraryFiles(),
});
