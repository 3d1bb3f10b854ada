import { defineSchedule } from '../../core/entry/entry-point.ts';
import { billingTick } from '../code-server.service.ts';

/**
 * Every 5 minutes. At the platform's clock rather than `firedAt`: the period charged is the one that
 * ended before now, whenever the firing ran, and both wirings and the operator's tick agree on it.
 */
export default defineSchedule({
  run: async ({ ports, log }) => {
    const report = await billingTick(ports.clock.now(), ports, log);
    log.info('code server billing tick', { ...report });
  },
});
