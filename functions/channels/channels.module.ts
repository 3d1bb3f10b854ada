import * as z from 'zod';
import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createChannelStore } from './channel.store.ts';
import { DEFAULT_API_BASES } from './platform-api.ts';

const apiBase = (fallback: string) => z.url().default(fallback);
/** Each platform's API is the real service unless set: tests point them at loopback stand-ins. */
const apiBaseMeaning = (service: string) => `The base URL of ${service}'s API`;

/**
 * Channels (SPEC 4.9): an agent answering on messaging platforms and phone numbers. Platforms
 * deliver to the public inbound route, verified by each platform's own signature; the agent runs
 * after the acknowledgement from the `deliver-reply` queue entry point (SQS in the cloud), so a
 * slow agent never makes a platform time out and the run outlives the inbound function.
 */
export const channelsArea = defineArea({
  name: 'channels',
  routes: [
    { method: 'POST', path: '/channels', handler: 'create-channel', auth: 'required' },
    { method: 'GET', path: '/channels', handler: 'list-channels', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/channels/{channelId}', handler: 'get-channel', auth: 'required', callers: 'role' },
    { method: 'PUT', path: '/channels/{channelId}', handler: 'update-channel', auth: 'required' },
    { method: 'DELETE', path: '/channels/{channelId}', handler: 'delete-channel', auth: 'required' },
    // Runs the agent and waits for it, as the buffered chat does (SPEC part 8: 300 s).
    { method: 'POST', path: '/channels/{channelId}/test', handler: 'test-channel', auth: 'required', timeoutSec: 300 },
    { method: 'POST', path: '/channels/{channelId}/call', handler: 'call-number', auth: 'required' },
    { method: 'POST', path: '/channels/{channelId}/mute-sender', handler: 'mute-sender', auth: 'required' },
    { method: 'POST', path: '/channels/{channelId}/unmute-sender', handler: 'unmute-sender', auth: 'required' },
    { method: 'GET', path: '/channels/{channelId}/muted-senders', handler: 'list-muted-senders', auth: 'required', callers: 'role' },
    { method: 'POST', path: '/channels/{channelId}/send', handler: 'send-message', auth: 'required' },
    // Called by the platforms: no user credential, each request verified by its platform's signature.
    // A `webhook` channel answers with the agent's reply, so this waits as long as a buffered chat.
    // Meta sends its verification GET and its deliveries (POST) to the one Callback URL, so both
    // methods are on the webhookUrl (`{platform}`) and on the SPEC's `.../whatsapp` alike: a literal
    // segment wins over `{platform}` here and in API Gateway whatever the method, so it needs both too.
    { method: 'POST', path: '/channels/inbound/{channelId}/{platform}', handler: 'receive-inbound', auth: 'public', timeoutSec: 300 },
    { method: 'GET', path: '/channels/inbound/{channelId}/{platform}', handler: 'receive-inbound', auth: 'public' },
    { method: 'POST', path: '/channels/inbound/{channelId}/whatsapp', handler: 'receive-whatsapp', auth: 'public', timeoutSec: 300 },
    { method: 'GET', path: '/channels/inbound/{channelId}/whatsapp', handler: 'receive-whatsapp', auth: 'public' },
  ],
  entryPoints: [
    // One attempt: a retry would run the agent (and bill the owner) again; a failure is counted on the channel.
    { kind: 'queue', handler: 'deliver-reply', maxAttempts: 1, timeoutSec: 900 },
  ],
  tables: [
    // Keyed by id alone (an inbound delivery names only the id); `byOwner` lists an owner's.
    { name: 'channels', partitionKey: 'channelId', numberKeys: ['createdAt'], indexes: [{ name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' }] },
    // Per channel and sender (or thread): the conversation, mute and SMS opt-out.
    { name: 'channel-senders', partitionKey: 'channelId', sortKey: 'senderKey' },
    // Delivery ids already taken, so a platform's retry runs nothing twice; expire after a day.
    { name: 'channel-deliveries', partitionKey: 'deliveryKey', ttlAttribute: 'expiresAt' },
  ],
  provides: {
    channels: providePort({ tables: ['channels', 'channel-senders', 'channel-deliveries'] }, ({ db }) => createChannelStore(db)),
  },
  // `agentRuns`: the agent runs through the chat service, not the owner's chat endpoint (channel-chat.ts).
  uses: ['agents', 'secretBox', 'tasks', 'agentRuns', 'usageLogs'],
  settings: {
    CHANNEL_API_BASE_WORKSPACE_CHAT: apiBase(DEFAULT_API_BASES.CHANNEL_API_BASE_WORKSPACE_CHAT).describe(apiBaseMeaning('Slack')),
    CHANNEL_API_BASE_COMMUNITY_CHAT: apiBase(DEFAULT_API_BASES.CHANNEL_API_BASE_COMMUNITY_CHAT).describe(apiBaseMeaning('Discord')),
    CHANNEL_API_BASE_BOT_MESSENGER: apiBase(DEFAULT_API_BASES.CHANNEL_API_BASE_BOT_MESSENGER).describe(apiBaseMeaning('Telegram')),
    CHANNEL_API_BASE_PHONE_MESSENGER: apiBase(DEFAULT_API_BASES.CHANNEL_API_BASE_PHONE_MESSENGER).describe(apiBaseMeaning('WhatsApp')),
    CHANNEL_API_BASE_PHONE: apiBase(DEFAULT_API_BASES.CHANNEL_API_BASE_PHONE).describe(`${apiBaseMeaning('Twilio')}, for every phone channel kind`),
    CHANNEL_AUTO_PAUSE_FAILURES: z.coerce
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(10)
      .describe('Failed deliveries in a row (agent runs or replies) after which a channel pauses itself; 0 never pauses'),
  },
});
