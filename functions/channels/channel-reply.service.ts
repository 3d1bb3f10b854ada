import { lineageOf } from '../core/http/lineage.ts';
import { publicUrls } from '../core/http/public-urls.ts';
import { uuid } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import { chatOnChannel } from './channel-chat.ts';
import { openConfig } from './channel.service.ts';
import type { ReplyTask } from './inbound.service.ts';
import { sendReply } from './platform-api.ts';

/**
 * Runs the agent on an acknowledged message and sends its reply through the platform, as the
 * channel's owner; the run's lineage is a child of the inbound request's. A channel deleted or
 * paused meanwhile sends nothing; a reply the platform refuses counts as a channel failure.
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
    await ports.channels.countFailure(channel.channelId);
    return;
  }
  if (reply.trim() === '') return;
  try {
    await sendReply(ports, channel.platform, await openConfig(channel, ports), task.message.replyTo, reply);
  } catch (error) {
    scope.log.warn('channel reply not delivered', { error });
    await ports.channels.countFailure(channel.channelId);
  }
}
