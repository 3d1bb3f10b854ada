import { startService, type BoundService, type StartedService } from '../../functions/core/entry/service.ts';
import type { Ports } from '../../functions/ports.ts';
import type { Host } from '../manifest/types.ts';

/** The in-process stand-in for the Fargate services behind `npm start`: one per host that has one. */
export interface LocalServices {
  /** The running service of `host`, or null when it has none or it is stopping. */
  forHost(host: Host): StartedService | null;
  /** Stops every service (signal aborted, `close()` awaited); the same promise however often it is called. */
  close(): Promise<void>;
}

/**
 * Starts each service in turn, after the ports are ready. A service that fails to start stops the
 * ones already started and fails start-up, as a task that cannot start fails its deployment.
 */
export async function startLocalServices(services: readonly BoundService[], ports: Ports): Promise<LocalServices> {
  const running = new Map<Host, StartedService>();
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= Promise.all([...running.values()].map((s) => s.stop())).then(() => undefined));
  try {
    for (const bound of services) running.set(bound.spec.host, await startService(bound, ports));
  } catch (error) {
    await close();
    throw error;
  }
  return {
    // Once stopping, new requests get 503 instead of reaching a service that is draining.
    forHost: (host) => (closing === undefined ? (running.get(host) ?? null) : null),
    close,
  };
}
