import { areas } from './areas.ts';
import type { TableSpec } from './types.ts';

/**
 * Every table of the platform, from the area modules that own them. Invariants are single-item
 * conditional writes, so uniqueness (aliases, token digests) lives in tables whose key is the
 * unique value.
 */
export const tables: readonly TableSpec[] = areas.flatMap((area): readonly TableSpec[] => area.tables);

export type TableName = (typeof areas)[number]['tables'][number]['name'];
