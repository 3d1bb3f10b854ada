/**
 * Whether an embed lets one more chat or call through. Apart from embed.service.ts because the chat
 * and voice services check every embed credential here, and importing the service would bring the
 * embed area's request schemas into their bundles (the agents function sits near its 200 KB budget).
 */
import { AccessDeniedError, QuotaExceededError } from '../core/errors.ts';
import type { EmbedRecord } from './embed.schema.ts';
import type { EmbedStore } from './embed.store.ts';

/** Why the owner's quota refuses `use` now, or null: credits stop chats and calls, minutes stop calls. */
function quotaSpent(record: EmbedRecord, use: 'chat' | 'voice'): string | null {
  if (record.creditLimit !== null && record.creditsUsed >= record.creditLimit) return 'This widget has used up its credit limit; the site owner can raise it.';
  if (use === 'voice' && record.minutesLimit !== null && record.minutesUsed >= record.minutesLimit)
    return 'This widget has used up its voice minutes; the site owner can raise the limit.';
  return null;
}

/** Refuses when every one of `uses` is out of quota (a widget with voice minutes left still gets its text chat). */
export function assertWithinQuota(record: EmbedRecord, uses: readonly ('chat' | 'voice')[]): void {
  const reasons = uses.map((use) => quotaSpent(record, use));
  if (reasons.every((reason) => reason !== null) && reasons[0] !== undefined) throw new QuotaExceededError(reasons[0]);
}

/**
 * For chat and voice: a credential issued through an embed works only while that embed is active
 * and within its quota. One strongly consistent read per chat or call: revocation takes effect at
 * once, without a revocation list or short token lifetimes. Returns the record (its limits).
 */
export async function admitEmbedUse(embedTokenId: string, use: 'chat' | 'voice', ports: { readonly embeds: Pick<EmbedStore, 'get'> }): Promise<EmbedRecord> {
  const record = await ports.embeds.get(embedTokenId);
  if (record === null || record.status !== 'active') throw new AccessDeniedError("This widget's embed token has been revoked.", 'EMBED_REVOKED');
  assertWithinQuota(record, [use]);
  return record;
}
