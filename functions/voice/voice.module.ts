import * as z from 'zod';
import { defineArea, KIB } from '../../lib/manifest/define.ts';

/**
 * Voice agents' real-time bridge (SPEC 4.2, parts 5.6 and 8): a service owning the voice host,
 * in-process locally and a Fargate service in the cloud. It has no tables: agents, credits, keys
 * and usage records are the other areas' and the kernel's.
 */
export const voiceArea = defineArea({
  name: 'voice',
  // One task: a session handed to the runtime function connects back through the load balancer,
  // which must bring it to the task holding the call; with several tasks it may not (ARCHITECTURE.md,
  // Voice agents). A task bridges audio only, so one vCPU carries a few hundred calls.
  entryPoints: [{ kind: 'service', handler: 'voice-bridge', host: 'voice', cpu: 1024, memoryMb: 2048, desiredCount: 1 }],
  uses: ['agents', 'credits', 'keysReader', 'compute', 'usageLogs', 'users', 'tokens', 'embeds'],
  settings: {
    /** Longest a session may last; it then ends with an error frame `SESSION_LIMIT` and close 1000. */
    VOICE_MAX_SESSION_SEC: z.coerce
      .number()
      .int()
      .min(1)
      .max(4 * 3600)
      .default(1800),
    /** A session with nothing from the caller (audio or text) for this long ends with close 4408. */
    VOICE_IDLE_TIMEOUT_SEC: z.coerce.number().min(1).max(3600).default(120),
    /** Largest WebSocket message accepted; a larger one closes the socket with 1009. */
    VOICE_MAX_FRAME_BYTES: z.coerce
      .number()
      .int()
      .min(1 * KIB)
      .max(1024 * KIB)
      .default(64 * KIB),
    /** Sessions one user may hold at once (per bridge task); one more is refused with 4429. */
    VOICE_MAX_SESSIONS_PER_USER: z.coerce.number().int().min(1).max(100).default(3),
    /** Voice time paid ahead with each debit while a session runs (see core/credit-meter.ts). */
    VOICE_BILLING_TICK_SEC: z.coerce.number().min(0.1).max(300).default(10),
  },
});
