import { defineStorageEvent } from '../../core/entry/storage-event.ts';
import { indexUploadedObject } from '../knowledge.service.ts';

/** An object put through an upload URL (under `incoming/`): checked, moved to its key and indexed. */
export default defineStorageEvent({
  run: ({ ports, log, object }) => indexUploadedObject(object, { ...ports, log }),
});
