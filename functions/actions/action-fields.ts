import * as z from 'zod';

/**
 * The action fields other modules name without the action's schemas: the run rules and the
 * platform's MCP server import these rather than action.schema.ts, whose request schemas, built
 * when the module loads, would come with it into their bundles.
 */

/** `event.keys` is filled by the platform with the owner's keys; no parameter may take its name. */
export const RESERVED_EVENT_FIELD = 'keys';

export const actionIdSchema = z.string().regex(/^act-[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must be "act-" followed by 1 to 64 letters, digits, "-" or "_"');
