import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import type { SecretBox, SecretContext } from '../core/secret-box.ts';
import { registerSecret } from '../core/secret-scope.ts';
import { keyHint, MAX_KEYS_PER_USER, publicKey, type KeyRecord } from './key.schema.ts';
import type { KeyStore } from './key.store.ts';

export interface KeyPorts {
  readonly keys: KeyStore;
  readonly secretBox: SecretBox;
  readonly clock: Clock;
}

/** Binds a sealed value to its owner and name. */
function sealContext(userId: string, serviceName: string): SecretContext {
  return { purpose: 'third-party-key', userId, serviceName };
}

/** Creates or replaces the owner's key for `serviceName`. The answer never holds the value. */
export async function storeKey(actor: UserActor, input: { serviceName: string; apiKey: string }, ports: KeyPorts) {
  return putKey(actor.userId, input.serviceName, input.apiKey, ports);
}

/** Shared by the keys endpoint and OAuth callbacks (which store provider tokens as keys). */
export async function putKey(userId: string, serviceName: string, value: string, ports: KeyPorts) {
  const existing = await ports.keys.get(userId, serviceName);
  if (existing === null && (await ports.keys.list(userId)).length >= MAX_KEYS_PER_USER) {
    throw new ConflictError(`An account may store at most ${MAX_KEYS_PER_USER} keys; delete one first.`);
  }
  const now = ports.clock.now();
  const record: KeyRecord = {
    userId,
    serviceName,
    sealed: await ports.secretBox.seal(value, sealContext(userId, serviceName)),
    hint: keyHint(value),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  await ports.keys.put(record);
  return { ...publicKey(record), replaced: existing !== null, message: existing === null ? 'Key stored.' : 'Key replaced.' };
}

export async function listKeys(actor: UserActor, ports: Pick<KeyPorts, 'keys'>) {
  const keys = (await ports.keys.list(actor.userId)).map(publicKey).sort((a, b) => a.serviceName.localeCompare(b.serviceName));
  return { keys, count: keys.length };
}

export async function checkKey(actor: UserActor, serviceName: string, ports: Pick<KeyPorts, 'keys'>) {
  return { serviceName, exists: (await ports.keys.get(actor.userId, serviceName)) !== null };
}

export async function deleteKey(actor: UserActor, serviceName: string, ports: Pick<KeyPorts, 'keys'>) {
  if (!(await ports.keys.delete(actor.userId, serviceName))) throw new NotFoundError(`No key stored for ${serviceName}.`);
  return { serviceName, deleted: true, message: 'Key deleted.' };
}

/**
 * The keys reader every user-code run goes through. A run gets the resource owner's keys; when the
 * caller is that owner acting through a role token, only the keys attached to the token (a run
 * token minted for the owner's own run carries the run's keys, or null for all of them).
 */
export function createKeysReader(ports: Pick<KeyPorts, 'keys' | 'secretBox'>): KeysReader {
  /** The names a caller's run may receive: all, or for the owner's own role token only the attached ones. */
  const allowedFor = (caller: UserActor, ownerId: string) =>
    caller.scope === 'role' && caller.userId === ownerId && caller.roleKeys !== null ? new Set(caller.roleKeys) : null;

  /** Opens the records, all at once (in the cloud each is a KMS call), and registers each value for scrubbing. */
  async function open(ownerId: string, records: readonly KeyRecord[]): Promise<Record<string, string>> {
    const values = await Promise.all(
      records.map(async (record) => {
        const value = await ports.secretBox.open(record.sealed, sealContext(ownerId, record.serviceName));
        registerSecret(value);
        return [record.serviceName, value] as const;
      }),
    );
    return Object.fromEntries(values);
  }

  return {
    async readKeys(caller, ownerId, serviceNames) {
      const allowed = allowedFor(caller, ownerId);
      const wanted = [...new Set(serviceNames.map((n) => n.toLowerCase()))].filter((n) => allowed === null || allowed.has(n));
      const records = await Promise.all(wanted.map((name) => ports.keys.get(ownerId, name)));
      return open(
        ownerId,
        records.filter((r): r is KeyRecord => r !== null),
      );
    },
    async readAllKeys(caller, ownerId) {
      const allowed = allowedFor(caller, ownerId);
      // The listing holds the sealed values already: no second read per key.
      const records = (await ports.keys.list(ownerId)).filter((r) => allowed === null || allowed.has(r.serviceName.toLowerCase()));
      return open(ownerId, records);
    },
  };
}
