import { Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { RouteSpec } from '../manifest/types.ts';
import type { PlatformData } from './data-stores.ts';
import { writeAreaEntry, writeFallbackEntry } from './function-entries.ts';
import { PlatformFunction, type PlatformEnvironment } from './platform-function.ts';

/** Seconds a function outlives its slowest route, so the handler's own timeout answers first. */
const TIMEOUT_MARGIN_SEC = 3;

export interface PlatformFunctionsProps {
  /** Buffered routes grouped by area (`routesByArea`): one function per area, holding all of them. */
  readonly areas: ReadonlyMap<string, readonly RouteSpec[]>;
  /** The configuration every function reads. */
  readonly environment: PlatformEnvironment;
  /** Tables, buckets and the secrets key the area functions may use. */
  readonly data: PlatformData;
  /** Where the generated entry files are written. @default DEFAULT_ENTRIES_DIR */
  readonly entriesDir?: string;
}

/**
 * One Lambda per manifest area, its bundle holding only that area's handlers, and the fallback
 * behind the API's catch-all routes.
 */
export class PlatformFunctions extends Construct {
  /** The function of each area, keyed by area. */
  readonly areas: ReadonlyMap<string, PlatformFunction>;
  readonly fallback: PlatformFunction;

  constructor(scope: Construct, id: string, props: PlatformFunctionsProps) {
    super(scope, id);
    this.areas = new Map(
      [...props.areas].map(([area, routes]) => {
        const slowest = Math.max(...routes.map((r) => r.timeoutSec));
        const fn = new PlatformFunction(this, `Area-${area}`, {
          entry: writeAreaEntry(area, routes, props.entriesDir),
          description: `Platform area ${area}: ${routes.length} route(s)`,
          timeout: Duration.seconds(slowest + TIMEOUT_MARGIN_SEC),
          environment: props.environment,
        });
        props.data.grantReadWrite(fn);
        return [area, fn];
      }),
    );
    this.fallback = new PlatformFunction(this, 'Fallback', {
      entry: writeFallbackEntry(props.entriesDir),
      description: 'Platform 404/405 for paths and methods no route has',
      // It answers from the route table alone: no platform, no stores, no grants.
      timeout: Duration.seconds(10),
      environment: props.environment,
    });
  }
}
