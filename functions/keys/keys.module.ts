import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createKeysReader } from './key.service.ts';
import { createKeyStore } from './key.store.ts';

/** Users' third-party keys, sealed (SPEC 4.13). */
export const keysArea = defineArea({
  name: 'keys',
  routes: [
    // Keys (SPEC 4.13). Checking whether one named key is stored is a read role tokens may make
    // (e.g. a CI job checking its prerequisites); listing names and hints stays with full scope, as
    // before, so a role token learns the owner's key names only by guessing them.
    { method: 'POST', path: '/keys/store', handler: 'store-key', auth: 'required' },
    { method: 'GET', path: '/keys/list', handler: 'list-keys', auth: 'required' },
    { method: 'GET', path: '/keys/check/{serviceName}', handler: 'check-key', auth: 'required', callers: 'role' },
    { method: 'DELETE', path: '/keys/{serviceName}', handler: 'delete-key', auth: 'required' },
  ],
  tables: [
    // Third-party keys, sealed (AES-256-GCM; KMS-wrapped data keys in the cloud).
    { name: 'keys', partitionKey: 'userId', sortKey: 'serviceName' },
  ],
  provides: {
    keys: providePort({ tables: ['keys'] }, ({ db }) => createKeyStore(db)),
    // What running code needs of the keys: open them, never seal new ones.
    keysReader: providePort({ tables: ['keys'], secretsKey: 'open' }, ({ db, secretBox }) => createKeysReader({ keys: createKeyStore(db), secretBox })),
  },
  uses: ['secretBox'],
});
