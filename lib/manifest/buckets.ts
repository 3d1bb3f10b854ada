import { areas } from './areas.ts';
import type { BucketSpec } from './types.ts';

/** Object storage of the platform, from the area modules that own it. */
export const buckets: readonly BucketSpec[] = areas.flatMap((area): readonly BucketSpec[] => area.buckets);

// Defined beside the kernel, which may not import this list (functions/core/area-list.ts).
export type { BucketName } from '../../functions/core/area-list.ts';
