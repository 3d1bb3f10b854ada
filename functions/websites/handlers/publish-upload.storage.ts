import { defineStorageEvent } from '../../core/entry/storage-event.ts';
import { publishUploadedObject } from '../websites.service.ts';

/** An object posted through an upload URL (under `incoming/`): checked and moved into its site. */
export default defineStorageEvent({
  run: ({ ports, log, object }) => publishUploadedObject(object, { ...ports, log }),
});
