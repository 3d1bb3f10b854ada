import { areas } from './areas.ts';
import type { TableSpec } from './types.ts';

/**
 * Every table of the platform, from the area modules that own them. Invariants are single-item
 * conditional writes, so uniqueness (aliases, token digests) lives in tables whose key is the
 * unique value.
 */
export const tables: readonly TableSpec[] = areas.flatMap((area): readonly TableSpec[] => area.tables);

// Defined beside the kernel, which may not import this list (functions/core/area-list.ts).
export type { TableName } from '../../functions/core/area-list.ts';
