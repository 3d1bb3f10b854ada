import * as z from 'zod';
import { defineArea, KIB, providePort } from '../../lib/manifest/define.ts';
import { createRendezvousDirectory } from './rendezvous.store.ts';

/**
 * Voice agents' real-time bridge (SPEC 4.2, parts 5.6 and 8): a service owning the voice host,
 * in-process locally and a Fargate service in the cloud. Its one table says which task holds each
 * session handed to the runtime function; agents, credits, keys and usage records are the other
 * areas' and the kernel's.
 */
export const voiceArea = defineArea({
  name: 'voice',
  // A task bridges audio only, so one vCPU carries a few hundred calls; more tasks come with more
  // calls. A runtime's connect-back that lands on another task is passed on to the task holding
  // the call (handoff.ts, ARCHITECTURE.md "Voice agents").
  entryPoints: [
    {
      kind: 'service',
      handler: 'voice-bridge',
      host: 'voice',
      cpu: 1024,
      memoryMb: 2048,
      desiredCount: 1,
      scaling: { maxCount: 10, connectionsPerTask: 200 },
      peers: true,
    },
  ],
  tables: [{ name: 'voice-rendezvous', partitionKey: 'sessionId', ttlAttribute: 'expiresAt' }],
  provides: {
    voiceRendezvous: providePort({ tables: ['voice-rendezvous'] }, ({ db }) => createRendezvousDirectory(db)),
  },
  uses: ['agents', 'credits', 'keysReader', 'compute', 'usageLogs', 'users', 'tokens', 'channels', 'embeds'],
  settings: {
    VOICE_MAX_SESSION_SEC: z.coerce
      .number()
      .int()
      .min(1)
      .max(4 * 3600)
      .default(1800)
      .describe('Longest a voice session may last, in seconds; it then ends with an error frame `SESSION_LIMIT` and close 1000'),
    VOICE_IDLE_TIMEOUT_SEC: z.coerce
      .number()
      .min(1)
      .max(3600)
      .default(120)
      .describe('A live voice session with nothing from the caller (audio or text) for this long, in seconds, ends with close 4408'),
    VOICE_START_TIMEOUT_SEC: z.coerce
      .number()
      .min(1)
      .max(300)
      .default(30)
      .describe('A voice session whose agent has not started within this long, in seconds, ends with `RUNTIME_UNAVAILABLE` and close 1011'),
    VOICE_MAX_FRAME_BYTES: z.coerce
      .number()
      .int()
      .min(1 * KIB)
      .max(1024 * KIB)
      .default(64 * KIB)
      .describe('Largest voice WebSocket message accepted, in bytes; a larger one closes the socket with 1009'),
    // Twilio opens one socket per call, authenticated within milliseconds, so this bounds a
    // stranger's sockets rather than calls.
    VOICE_MAX_UNAUTHENTICATED_PER_ADDRESS: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(16)
      .describe(
        'Voice sockets not yet authenticated that one address may hold open (per bridge task); one more is answered 429 before the WebSocket handshake',
      ),
    VOICE_MAX_UNAUTHENTICATED: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(256)
      .describe('Voice sockets not yet authenticated from all addresses together (per bridge task); past it, 429'),
    VOICE_MAX_SESSIONS_PER_USER: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe('Voice sessions one user may hold at once (per bridge task); one more is refused with 4429'),
    VOICE_PEER_PORT: z.coerce
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(8080)
      .describe("Cloud: the port other voice bridge tasks reach this one on to hand sessions off, the container's port"),
    VOICE_BILLING_TICK_SEC: z.coerce
      .number()
      .min(0.1)
      .max(300)
      .default(10)
      .describe('How far ahead voice time is paid with each debit while a session runs, in seconds (as `CHAT_BILLING_TICK_SEC`)'),
  },
});
