import { defineRoute } from '../../core/http/route.ts';
import { webhookReceivedResponse } from '../billing.schema.ts';
import { handleStripeWebhook } from '../webhook.service.ts';

/** Stripe's deliveries: no body schema, since the signature is over the raw bytes. */
export default defineRoute({
  response: webhookReceivedResponse,
  // A Stripe event, JSON; documented by media type only, as Stripe's own schema describes it.
  rawBody: ['application/json'],
  run: ({ request, lineage, ports }) => handleStripeWebhook(request.body ?? Buffer.alloc(0), request.headers['stripe-signature'], lineage.requestId, ports),
});
