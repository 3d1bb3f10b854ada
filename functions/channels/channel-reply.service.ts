import { lineageOf } from '../core/http/lineage.ts';
import { publicUrls } from '../core/http/public-urls.ts';
import { uuid } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import { chatOnChannel } from './channel-chat.ts';
import type { ChannelRecord } from './channel.schema.ts';
import { openConfig } from './channel.service.ts';
import type { ReplyTask } from './inbound.service.ts';
import { sendReply } from './platform-api.ts';

/**
 * Runs the agent on an acknowledged message and sends its reply through the platform, as the
 * channel's owner; the run's lineage is a child of the inbound request's. A channel deleted or
 * paused meanwhile sends nothing; a run that fails or a reply the platform refuses counts as a
 * channel failure, and `CHANNEL_AUTO_PAUSE_FAILURES` of them in a row pause the channel: a revoked
 * bot token or a broken agent would otherwise run (and bill) the agent for every message in vain.
 */
export async function deliverReply(task: ReplyTask, ports: Ports, log: Logger, signal: AbortSignal): Promise<void> {
  const channel = await ports.channels.get(task.channelId);
  if (channel === null || channel.status !== 'active') return;
  const lineage = lineageOf(uuid(), task.lineage);
  const scope = {
    lineage,
    log: log.child({ requestId: lineage.requestId, channelId: channel.channelId }),
    urls: publicUrls(ports.config, task.baseUrl),
    signal,
  };
  let reply: string;
  try {
    ({ reply } = await chatOnChannel(channel, task.message.conversationKey, task.message.text, scope, ports));
  } catch (error) {
    scope.log.warn('channel agent run failed', { error });
    await countFailure(channel, 'the agent failed', ports, scope.log);
    return;
  }
  try {
    if (reply.trim() !== '') await sendReply(ports, channel.platform, await openConfig(channel, ports), task.message.replyTo, reply);
  } catch (error) {
    scope.log.warn('channel reply not delivered', { error });
    await countFailure(channel, 'the platform refused the replies', ports, scope.log);
    return;
  }
  if ((channel.consecutiveFailures ?? 0) > 0) await ports.channels.clearFailureRun(channel.channelId);
}

async function countFailure(channel: ChannelRecord, why: string, ports: Ports, log: Logger): Promise<void> {
  const limit = ports.config.CHANNEL_AUTO_PAUSE_FAILURES;
  const reason = `Paused after ${limit} failed deliveries in a row (last: ${why}); set the status to active to resume.`;
  if ((await ports.channels.countFailure(channel.channelId, limit, reason, ports.clock.now())) === 'paused') {
    log.warn('channel paused after failed deliveries in a row', { failures: limit, last: why });
  }
}
