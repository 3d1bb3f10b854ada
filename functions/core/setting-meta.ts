/**
 * What a setting's schema says about it beyond its validation, read by the configuration reference
 * (docs/configuration.md, written by `npm run docs:config` from lib/docs/configuration.ts). Every
 * setting of the kernel (core/config.ts), of an area module (`settings`) and of the local platform
 * (lib/local/main.ts) carries at least a description, `.describe('...')` or `.meta({ description })`,
 * written for the operator: what the value does, its unit and accepted forms. A comment beside it
 * keeps what only a maintainer needs (why the default, why the limit).
 *
 * Whether an operator sets a setting is metadata rather than a naming convention: the variables
 * wired by the platform itself (TABLE_PREFIX, LOCAL_ORIGIN, TASK_QUEUES, ...) have no common
 * prefix, and renaming them would touch the stack and every function for a documentation concern.
 */

/** Who gives a setting its value when it is not the operator: the local platform at each start, the CDK stack, or both. */
export const SETTERS = ['local', 'stack', 'wiring'] as const;
export type Setter = (typeof SETTERS)[number];

declare module 'zod' {
  interface GlobalMeta {
    /**
     * Set by the platform itself, never by the operator: `local` (lib/local/platform.ts, at each
     * start), `stack` (lib/cloud, on the functions that need it), `wiring` (both). Absent: the
     * operator's setting, read from `npm start`'s environment.
     */
    setBy?: Setter;
    /**
     * The deploy option (`-c name=...`, docs/deploying.md) the stack sets this variable from, on
     * the settings an operator chooses in the cloud; without one, a cloud function gets the default.
     */
    deployOption?: string;
    /**
     * What applies when the variable is unset and the schema has no default: one computed at start
     * (`PORT + 1`) or applied where the setting is used. Never beside a schema default, which the
     * reference prints itself.
     */
    whenUnset?: string;
  }
}
