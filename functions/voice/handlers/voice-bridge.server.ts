import { networkInterfaces } from 'node:os';
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
      startTimeoutSec: config.VOICE_START_TIMEOUT_SEC,
      maxFrameBytes: config.VOICE_MAX_FRAME_BYTES,
      maxSessionsPerUser: config.VOICE_MAX_SESSIONS_PER_USER,
      maxUnauthenticatedPerAddress: config.VOICE_MAX_UNAUTHENTICATED_PER_ADDRESS,
      maxUnauthenticated: config.VOICE_MAX_UNAUTHENTICATED,
      billingTickSec: config.VOICE_BILLING_TICK_SEC,
      // Sessions handed off (the cloud) may connect back to another task, which passes them on here.
      ...(canHoldBidiSessions(ports.compute) ? {} : { peerAddress: `${privateAddress()}:${config.VOICE_PEER_PORT}` }),
    });
  },
});

/** The task's private IPv4 address (its network interface in the VPC; not loopback or link-local). */
function privateAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal && !address.address.startsWith('169.254.')) return address.address;
    }
  }
  throw new Error('No private IPv4 address: other voice bridge tasks could not pass sessions to this one');
}
