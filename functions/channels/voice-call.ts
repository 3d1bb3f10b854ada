import { ServiceUnavailableError } from '../core/errors.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';
import type { Ports } from '../ports.ts';
import type { ChannelRecord } from './channel.schema.ts';
import { twimlStream } from './platforms.ts';

/**
 * Why the channel's agent cannot take a call now, or null when it can. Only a voice agent
 * (`agentType: bidi`) speaks on a call; a text agent would leave the caller with silence. Asked at
 * each call, since an agent's type can change after the channel is made.
 */
export async function whyNoCalls(
  channel: Pick<ChannelRecord, 'agentId'>,
  ports: Pick<Ports, 'agents'>,
): Promise<{ kind: 'text-agent' | 'no-agent'; message: string } | null> {
  const agent = await ports.agents.get(channel.agentId);
  if (agent === null || agent.status === 'deleted') return { kind: 'no-agent', message: `the channel's agent ${channel.agentId} no longer exists` };
  if (agent.agentType !== 'bidi')
    return { kind: 'text-agent', message: `the channel's agent ${channel.agentId} is a text agent; calls need a voice agent (agentType "bidi")` };
  return null;
}

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
