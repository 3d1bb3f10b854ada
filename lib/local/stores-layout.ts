import type { AreaModule } from '../manifest/types.ts';
import { SCHEDULE_TABLE } from '../../functions/adapters/schedules/local.ts';
import type { StoresLayout } from './stores.ts';
import { TASK_TABLE } from '../../functions/adapters/task-queue/local.ts';

/** The prefix of the local platform's tables and buckets (TABLE_PREFIX, BUCKET_PREFIX). */
export const LOCAL_PREFIX = 'local-';

/**
 * What the local stores hold for the platform serving `served`: the areas' tables and buckets, and
 * the tables of the local task queue and schedules. The build seeds an empty data directory's
 * stores from the same layout (build.ts), so the two cannot drift apart.
 */
export function localStoresLayout(served: readonly AreaModule[]): StoresLayout {
  return {
    prefix: LOCAL_PREFIX,
    tables: [...served.flatMap((area) => area.tables), TASK_TABLE, SCHEDULE_TABLE],
    buckets: served.flatMap((area) => area.buckets),
  };
}
