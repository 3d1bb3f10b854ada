import type { Lineage } from '../core/http/lineage.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import type { ChannelError, ChannelRecord } from './channel.schema.ts';

/** Long enough for a service's reason and an agent's error line; `lastError` is shown, not a log. */
const MESSAGE_MAX_CHARS = 500;

/**
 * `text` fit to show an owner: URLs left out (a Telegram bot token sits in a URL's path, and an
 * error may quote the URL it failed on), secrets of this request (the channel's config, see
 * `openConfig`) and token-shaped strings replaced, whitespace folded, cut to `maxChars`.
 */
export function ownerSafeText(text: string, maxChars: number): string {
  const clean = String(
    redact(
      text
        .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[URL]')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
  return clean.length > maxChars ? `${clean.slice(0, maxChars - 1)}…` : clean;
}

/**
 * The code and message the API would answer for `error` (a generic one for an unexpected error,
 * whose text may hold internals), after `context` where the error's own text does not say what failed.
 */
export function failureOf(error: unknown, context?: string): Omit<ChannelError, 'at'> {
  const { code, message } = toErrorResponse(error);
  return { code, message: ownerSafeText(context === undefined ? message : `${context}: ${message}`, MESSAGE_MAX_CHARS) };
}

/** Which of the channel's jobs failed, as its usage record's `requestType` names it. */
export type ChannelFailureKind = 'CHANNEL_AGENT_RUN' | 'CHANNEL_REPLY' | 'CHANNEL_WEBHOOK_REGISTRATION' | 'CHANNEL_CALL';

export interface FailureNote {
  readonly kind: ChannelFailureKind;
  readonly failure: Omit<ChannelError, 'at'>;
  /** The request or task the failure happened in: the usage record is its. */
  readonly lineage: Lineage;
  readonly startedAt: number;
  /** What was being done, for the usage record (ids, never message text or secrets). */
  readonly request: Readonly<Record<string, unknown>>;
  /**
   * Counted: a delivery no one waited for (the reply task), which counts towards the automatic
   * pause. Not counted: a failure its caller was answered with at once.
   */
  readonly counted: boolean;
}

/**
 * Tells the owner why a channel failed, where they look: `lastError` on the channel (with the
 * failure count and automatic pause when counted, in one write) and a record in their usage logs
 * (`GET /logs`, resourceType `channel`). A channel not stored yet (a refused create) gets only the record.
 */
export async function noteChannelFailure(
  channel: Pick<ChannelRecord, 'channelId' | 'ownerId' | 'platform'>,
  note: FailureNote,
  ports: Pick<Ports, 'channels' | 'usageLogs' | 'clock' | 'config'>,
  log: Logger,
  stored = true,
): Promise<void> {
  const at = ports.clock.now();
  const error: ChannelError = { at, ...note.failure };
  if (stored && note.counted) await countFailure(channel.channelId, error, ports, log);
  else if (stored) await ports.channels.recordError(channel.channelId, error);
  await ports.usageLogs.write({
    lineage: note.lineage,
    userId: channel.ownerId,
    resourceId: channel.channelId,
    resourceType: 'channel',
    requestType: note.kind,
    status: 'error',
    request: { channelId: channel.channelId, platform: channel.platform, ...note.request },
    response: null,
    durationMs: at - note.startedAt,
    creditsUsed: 0,
    error: note.failure,
  });
}

/**
 * `noteChannelFailure` where the failure is also the caller's answer: a note that cannot be written
 * is logged, so the caller still gets the failure itself rather than the note's.
 */
export const noteFailureBeside = (...args: Parameters<typeof noteChannelFailure>): Promise<void> =>
  noteChannelFailure(...args).catch((error: unknown) => args[3].warn('channel failure not recorded', { error }));

async function countFailure(channelId: string, error: ChannelError, ports: Pick<Ports, 'channels' | 'config'>, log: Logger): Promise<void> {
  const limit = ports.config.CHANNEL_AUTO_PAUSE_FAILURES;
  const reason = `Paused after ${limit} failed deliveries in a row (the last is in lastError); set the status to active to resume.`;
  if ((await ports.channels.countFailure(channelId, limit, reason, error.at, error)) === 'paused') {
    log.warn('channel paused after failed deliveries in a row', { failures: limit, code: error.code });
  }
}
