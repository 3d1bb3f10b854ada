import { areas } from './areas.ts';
import type { BucketSpec } from './types.ts';

/** Object storage of the platform, from the area modules that own it. */
export const buckets: readonly BucketSpec[] = areas.flatMap((area): readonly BucketSpec[] => area.buckets);

export type BucketName = (typeof areas)[number]['buckets'][number]['name'];
