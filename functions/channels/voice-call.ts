import { ServiceUnavailableError } from '../core/errors.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';
import type { Ports } from '../ports.ts';
import type { ChannelRecord } from './channel.schema.ts';
import { twimlStream } from './platforms.ts';

/** Long enough for the platform to answer and open the media stream; the bridge checks it only on connect. */
const CALL_TOKEN_TTL_MS = 5 * 60_000;

/**
 * TwiML connecting a call to the voice bridge's Twilio stream. The stream carries a token that
 * may open a voice session with this channel's agent and nothing else (never the owner's token),
 * and the channel's id: the bridge reads the channel's initialPrompt itself, from a channel that
 * must belong to the token's user and point at that agent, so a caller cannot forge the prompt.
 */
export async function voiceCallTwiml(channel: ChannelRecord, urls: PublicUrls, ports: Pick<Ports, 'runTokens'>): Promise<string> {
  if (urls.voiceUrl === undefined) throw new ServiceUnavailableError('This platform has no voice host configured (VOICE_URL).', 'VOICE_UNAVAILABLE');
  const token = await ports.runTokens.mint({ userId: channel.ownerId, keys: null, agents: [channel.agentId] }, CALL_TOKEN_TTL_MS);
  const streamUrl = `${urls.voiceUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/ws/twilio/${encodeURIComponent(channel.agentId)}`;
  return twimlStream(streamUrl, { token, channelId: channel.channelId });
}
