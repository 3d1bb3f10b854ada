import type { EnvelopeStyle } from '../../../lib/manifest/types.ts';
import type { Lineage } from './lineage.ts';

/**
 * Success body in the route's envelope style (SPEC part 1). Website hosting answers like style B
 * (its SPEC 4.11 responses are `data: {...}`); only its errors differ, `{error}` alone (part 7).
 */
export function successBody(style: EnvelopeStyle, data: unknown, lineage: Lineage, meta?: Record<string, unknown>): unknown {
  if (style === 'A') return meta === undefined ? { success: true, data } : { success: true, data, meta };
  return { data, requestId: lineage.requestId, rootRequestId: lineage.rootRequestId, parentRequestId: lineage.parentRequestId };
}

/** Error body in the route's envelope style (SPEC part 7). */
export function errorBody(style: EnvelopeStyle, code: string, message: string, lineage: Lineage): unknown {
  if (style === 'A') return { success: false, error: { code, message }, requestId: lineage.requestId };
  if (style === 'website') return { error: message };
  return {
    error: message,
    code,
    requestId: lineage.requestId,
    rootRequestId: lineage.rootRequestId,
    parentRequestId: lineage.parentRequestId,
  };
}
