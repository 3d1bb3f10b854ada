import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '../core/db/dynamo.ts';

/**
 * Which bridge task holds each handed-over session, so a runtime's connect-back that the load
 * balancer brings to another task can be passed on to the right one (handoff.ts). One item per
 * session, written before the runtime is invoked and removed by its TTL.
 */
export interface RendezvousDirectory {
  /** Records that `address` (`host:port` of a task, reachable from the other tasks) holds the session. */
  put(sessionId: string, address: string, expiresAtMs: number): Promise<void>;
  /** The holding task's address; null for a session never recorded or one whose time is up. */
  find(sessionId: string, nowMs: number): Promise<string | null>;
}

interface DirectoryItem {
  readonly sessionId: string;
  readonly address: string;
  /** Epoch seconds, DynamoDB's TTL. */
  readonly expiresAt: number;
}

export function createRendezvousDirectory(db: Db): RendezvousDirectory {
  const table = db.table('voice-rendezvous');
  return {
    async put(sessionId, address, expiresAtMs) {
      const item: DirectoryItem = { sessionId, address, expiresAt: Math.ceil(expiresAtMs / 1000) };
      await db.doc.send(new PutCommand({ TableName: table, Item: item }));
    },
    async find(sessionId, nowMs) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { sessionId }, ConsistentRead: true }));
      const item = out.Item as DirectoryItem | undefined;
      // TTL deletes late (and dynalite never): the expiry is checked here too.
      return item !== undefined && item.expiresAt * 1000 > nowMs ? item.address : null;
    },
  };
}
