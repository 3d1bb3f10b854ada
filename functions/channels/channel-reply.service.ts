import { lineageOf } from '../core/http/lineage.ts';
import { publicUrls } from '../core/http/public-urls.ts';
import { uuid } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import { chatOnChannel } from './channel-chat.ts';
import { failureOf, noteChannelFailure, type ChannelFailureKind } from './channel-failure.ts';
import { openConfig } from './channel.service.ts';
import type { ReplyTask } from './inbound.service.ts';
import { sendReply } from './platform-api.ts';

/**
 * Runs the agent on an acknowledged message and sends its reply through the platform, as the
 * channel's owner; the run's lineage is a child of the inbound request's. A channel deleted or
 * paused meanwhile sends nothing; a run that fails or a reply the platform refuses counts as a
 * channel failure, kept as its `lastError` and in the owner's usage logs, and `CHANNEL_AUTO_PAUSE_FAILURES`
 * of them in a row pause the channel: a revoked bot token or a broken agent would otherwise run (and
 * bill) the agent for every message in vain.
 */
export async function deliverReply(task: ReplyTask, ports: Ports, log: Logger, signal: AbortSignal): Promise<void> {
  const channel = await ports.channels.get(task.channelId);
  if (channel === null || channel.status !== 'active') return;
  const startedAt = ports.clock.now();
  const lineage = lineageOf(uuid(), task.lineage);
  const scope = {
    lineage,
    log: log.child({ requestId: lineage.requestId, channelId: channel.channelId }),
    urls: publicUrls(ports.config, task.baseUrl),
    signal,
  };
  const fail = (kind: ChannelFailureKind, failure: ReturnType<typeof failureOf>) =>
    noteChannelFailure(
      channel,
      { kind, failure, lineage, startedAt, request: { messageId: task.message.messageId, senderId: task.message.senderId }, counted: true },
      ports,
      scope.log,
    );
  // Opened first: the channel's secrets are then known to this task's scrubbing (logs, lastError).
  const config = await openConfig(channel, ports);
  let reply: string;
  try {
    ({ reply } = await chatOnChannel(channel, task.message.conversationKey, task.message.text, scope, ports));
  } catch (error) {
    scope.log.warn('channel agent run failed', { error });
    await fail('CHANNEL_AGENT_RUN', failureOf(error, 'The agent run failed'));
    return;
  }
  try {
    if (reply.trim() !== '') await sendReply(ports, channel.platform, config, task.message.replyTo, reply);
  } catch (error) {
    scope.log.warn('channel reply not delivered', { error });
    await fail('CHANNEL_REPLY', failureOf(error));
    return;
  }
  if ((channel.consecutiveFailures ?? 0) > 0) await ports.channels.clearFailureRun(channel.channelId);
}
