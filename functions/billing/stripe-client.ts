/**
 * The platform's calls to Stripe, through the official `stripe` library: requests form-encoded as
 * Stripe's API takes them, webhook signatures checked on the raw body. The library (about 250 KB
 * minified, over the function bundles' budget) is loaded on first use by a specifier the bundler
 * does not follow and shipped beside the bundle (`STRIPE_LIBRARY_FILES`), as skills ships js-yaml.
 */
import { readdirSync } from 'node:fs';
import type StripeLibrary from 'stripe';
import { ServiceUnavailableError, UpstreamError, ValidationError } from '../core/errors.ts';

type StripeConstructor = typeof StripeLibrary;
type StripeInstance = InstanceType<StripeConstructor>;
export type StripeEvent = ReturnType<StripeInstance['webhooks']['constructEvent']>;

const loadModule = (specifier: string) => import(specifier) as Promise<unknown>;
let library: Promise<StripeConstructor> | undefined;
function stripeLibrary(): Promise<StripeConstructor> {
  library ??= loadModule('stripe').then((m) => (m as { default: StripeConstructor }).default);
  return library;
}

/**
 * The library's runtime files for the cloud function (its ESM build has no dependencies): listed
 * from node_modules where it is installed (the repository at synth), none where it is not.
 */
export function stripeLibraryFiles(root = process.cwd()): string[] {
  try {
    const esm = readdirSync(`${root}/node_modules/stripe/esm`, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .map((file) => `node_modules/stripe/esm/${file}`);
    return ['node_modules/stripe/package.json', 'node_modules/stripe/LICENSE', ...esm.sort()];
  } catch {
    return [];
  }
}

export interface StripeSettings {
  readonly STRIPE_SECRET_KEY?: string | undefined;
  readonly STRIPE_WEBHOOK_SECRET?: string | undefined;
  readonly STRIPE_PRICE_STARTER?: string | undefined;
  readonly STRIPE_PRICE_PROFESSIONAL?: string | undefined;
  readonly STRIPE_API_BASE: string;
}

/** 503 `BILLING_NOT_CONFIGURED`: the operator has not given the Stripe settings. */
export class BillingNotConfiguredError extends ServiceUnavailableError {
  constructor(missing: readonly string[]) {
    super(
      `Billing is not configured on this platform (missing ${missing.join(', ')}); the operator sets plans with POST /admin/users/{userId}/tier.`,
      'BILLING_NOT_CONFIGURED',
    );
  }
}

/** The settings a Stripe call needs, or 503 naming the missing ones. */
export function requireStripeSettings<K extends keyof StripeSettings>(settings: StripeSettings, names: readonly K[]): { [P in K]-?: string } {
  const missing = names.filter((name) => settings[name] === undefined || settings[name] === '');
  if (missing.length > 0) throw new BillingNotConfiguredError(missing);
  return Object.fromEntries(names.map((name) => [name, settings[name]])) as { [P in K]-?: string };
}

export interface CheckoutInput {
  readonly customer: string;
  readonly successUrl: string;
  readonly cancelUrl: string;
  /** A configured price id, or an inline monthly price in cents. */
  readonly price: { readonly id: string } | { readonly unitAmountCents: number; readonly productName: string };
  /** Copied onto the session and its subscription, so webhook events name the account and what it bought. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly idempotencyKey: string;
}

/** The Stripe operations the platform uses. */
export interface StripeGateway {
  createCustomer(input: { userId: string; email: string | null }, idempotencyKey: string): Promise<{ id: string }>;
  createCheckoutSession(input: CheckoutInput): Promise<{ id: string; url: string }>;
  createPortalSession(customer: string, returnUrl: string): Promise<{ url: string }>;
  retrieveSubscription(id: string): Promise<StripeLibrary.Subscription>;
  cancelAtPeriodEnd(subscriptionId: string): Promise<StripeLibrary.Subscription>;
  createConnectAccount(input: { userId: string; email: string | null }, idempotencyKey: string): Promise<{ id: string }>;
  createAccountLink(account: string, refreshUrl: string, returnUrl: string): Promise<{ url: string }>;
  retrieveAccount(account: string): Promise<{ id: string; payoutsEnabled: boolean; chargesEnabled: boolean; detailsSubmitted: boolean }>;
  createLoginLink(account: string): Promise<{ url: string }>;
  createTransfer(input: { amountCents: number; destination: string; metadata: Record<string, string> }, idempotencyKey: string): Promise<{ id: string }>;
  /** The event of a webhook delivery; ValidationError (400) when the signature does not verify. */
  verifyEvent(rawBody: Buffer, signature: string | undefined, nowSec: number): Promise<StripeEvent>;
}

/** Stripe's answer as a platform failure: a 502 naming what Stripe said, never the key. */
async function call<T>(what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UpstreamError(`Stripe refused to ${what}: ${message}`);
  }
}

export function createStripeGateway(settings: StripeSettings): StripeGateway {
  let client: Promise<StripeInstance> | undefined;
  const stripe = (): Promise<StripeInstance> => {
    const { STRIPE_SECRET_KEY } = requireStripeSettings(settings, ['STRIPE_SECRET_KEY']);
    client ??= stripeLibrary().then((Stripe) => {
      const base = new URL(settings.STRIPE_API_BASE);
      return new Stripe(STRIPE_SECRET_KEY, {
        host: base.hostname,
        port: base.port === '' ? (base.protocol === 'http:' ? 80 : 443) : Number(base.port),
        protocol: base.protocol === 'http:' ? 'http' : 'https',
        maxNetworkRetries: 2,
        timeout: 20_000,
        appInfo: { name: 'agent-platform' },
      });
    });
    return client;
  };

  return {
    async createCustomer({ userId, email }, idempotencyKey) {
      const s = await stripe();
      return call('create a customer', () => s.customers.create({ ...(email ? { email } : {}), metadata: { userId } }, { idempotencyKey }));
    },
    async createCheckoutSession(input) {
      const s = await stripe();
      const lineItem =
        'id' in input.price
          ? { price: input.price.id, quantity: 1 }
          : {
              quantity: 1,
              price_data: {
                currency: 'usd',
                unit_amount: input.price.unitAmountCents,
                recurring: { interval: 'month' as const },
                product_data: { name: input.price.productName },
              },
            };
      const session = await call('create a checkout session', () =>
        s.checkout.sessions.create(
          {
            mode: 'subscription',
            customer: input.customer,
            line_items: [lineItem],
            success_url: input.successUrl,
            cancel_url: input.cancelUrl,
            client_reference_id: input.metadata['userId'] ?? '',
            metadata: { ...input.metadata },
            subscription_data: { metadata: { ...input.metadata } },
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
      if (session.url === null) throw new UpstreamError('Stripe created a checkout session without a URL.');
      return { id: session.id, url: session.url };
    },
    async createPortalSession(customer, returnUrl) {
      const s = await stripe();
      return call('create a portal session', () => s.billingPortal.sessions.create({ customer, return_url: returnUrl }));
    },
    async retrieveSubscription(id) {
      const s = await stripe();
      return call('read a subscription', () => s.subscriptions.retrieve(id));
    },
    async cancelAtPeriodEnd(subscriptionId) {
      const s = await stripe();
      return call('cancel a subscription', () => s.subscriptions.update(subscriptionId, { cancel_at_period_end: true }));
    },
    async createConnectAccount({ userId, email }, idempotencyKey) {
      const s = await stripe();
      return call('create a connected account', () =>
        s.accounts.create(
          { type: 'express', ...(email ? { email } : {}), metadata: { userId }, capabilities: { transfers: { requested: true } } },
          { idempotencyKey },
        ),
      );
    },
    async createAccountLink(account, refreshUrl, returnUrl) {
      const s = await stripe();
      return call('create an onboarding link', () =>
        s.accountLinks.create({ account, refresh_url: refreshUrl, return_url: returnUrl, type: 'account_onboarding' }),
      );
    },
    async retrieveAccount(account) {
      const s = await stripe();
      const found = await call('read a connected account', () => s.accounts.retrieve(account));
      return {
        id: found.id,
        payoutsEnabled: found.payouts_enabled === true,
        chargesEnabled: found.charges_enabled === true,
        detailsSubmitted: found.details_submitted === true,
      };
    },
    async createLoginLink(account) {
      const s = await stripe();
      return call('create a dashboard link', () => s.accounts.createLoginLink(account));
    },
    async createTransfer({ amountCents, destination, metadata }, idempotencyKey) {
      const s = await stripe();
      return call('create a transfer', () => s.transfers.create({ amount: amountCents, currency: 'usd', destination, metadata }, { idempotencyKey }));
    },
    async verifyEvent(rawBody, signature, nowSec) {
      const { STRIPE_WEBHOOK_SECRET } = requireStripeSettings(settings, ['STRIPE_WEBHOOK_SECRET']);
      const Stripe = await stripeLibrary();
      if (signature === undefined || signature === '') throw new ValidationError('Missing Stripe-Signature header', ['stripe-signature: required']);
      try {
        // The platform's clock, so a test that moves it keeps its signatures' timestamps current.
        return Stripe.webhooks.constructEvent(rawBody, signature, STRIPE_WEBHOOK_SECRET, undefined, undefined, nowSec);
      } catch {
        throw new ValidationError(
          'The Stripe signature does not verify',
          ['stripe-signature: does not match the body and the webhook secret'],
          'INVALID_SIGNATURE',
        );
      }
    },
  };
}
