import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, type Db } from '../../functions/core/db/dynamo.ts';
import { tables } from '../../lib/manifest/tables.ts';
import { startLocalStores } from '../../lib/local/stores.ts';
import { TASK_TABLE } from '../../functions/adapters/task-queue/local.ts';
import { SCHEDULE_TABLE } from '../../functions/adapters/schedules/local.ts';
import { keepStoresProcess, takeStoresProcess } from './stores-pool.ts';

export interface LocalDb {
  readonly db: Db;
  stop(): Promise<void>;
}

/**
 * The manifest's tables on dynalite in a temporary directory, without the HTTP platform: for tests
 * of the store helpers, which need the real conditional writes and nothing else.
 */
export async function startLocalDb(): Promise<LocalDb> {
  const dataDir = await mkdtemp(join(tmpdir(), 'store-test-'));
  // The local task queue's and schedules' tables as well, for their own tests.
  const stores = await startLocalStores(
    dataDir,
    { prefix: 'test-', tables: [...tables, TASK_TABLE, SCHEDULE_TABLE], buckets: [] },
    await takeStoresProcess(),
    keepStoresProcess,
  );
  const db = createDb({
    AWS_REGION: 'us-east-1',
    TABLE_PREFIX: 'test-',
    DYNAMODB_ENDPOINT: stores.dynamoEndpoint,
    LOCAL_STORES_ACCESS_KEY_ID: stores.credentials.accessKeyId,
    LOCAL_STORES_SECRET_ACCESS_KEY: stores.credentials.secretAccessKey,
  });
  return {
    db,
    async stop() {
      db.doc.destroy();
      await stores.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
