import { defineService } from '../../core/entry/service.ts';
import { canHoldBidiSessions } from '../../runtimes/compute.ts';
import { createVoiceBridge } from '../bridge.ts';

/** A session handed to the runtime function lives in one Lambda invocation (15 minutes at most). */
const HANDED_OFF_MAX_SESSION_SEC = 840;

/** The voice host (SPEC 4.2): the WebSocket bridge, `/health` and `/metrics`. */
export default defineService({
  start({ ports, log }) {
    const { config } = ports;
    return createVoiceBridge(ports, log, {
      maxSessionSec: canHoldBidiSessions(ports.compute) ? config.VOICE_MAX_SESSION_SEC : Math.min(config.VOICE_MAX_SESSION_SEC, HANDED_OFF_MAX_SESSION_SEC),
      idleTimeoutSec: config.VOICE_IDLE_TIMEOUT_SEC,
      maxFrameBytes: config.VOICE_MAX_FRAME_BYTES,
      maxSessionsPerUser: config.VOICE_MAX_SESSIONS_PER_USER,
      billingTickSec: config.VOICE_BILLING_TICK_SEC,
    });
  },
});
