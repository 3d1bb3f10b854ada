import type { BucketSpec } from './types.ts';

/** Object storage of the platform; large bodies and user files go here, never into table items. */
export const buckets = [
  { name: 'blobs', purpose: 'large log bodies, sources and messages past the item-size threshold' },
] as const satisfies readonly BucketSpec[];

export type BucketName = (typeof buckets)[number]['name'];
