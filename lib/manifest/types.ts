import type * as z from 'zod';
import type { KernelPorts } from '../../functions/kernel-ports.ts';
import type { BucketSpec, EntryPointSpec, PortResources, RouteSpec, StaticAssetSpec, TableSpec } from './specs.ts';

// The manifest's data, in a file of its own which the kernel may import (it may not import this one).
export type * from './specs.ts';

/**
 * A port an area module provides (usually a store over its own tables): what it reaches in the
 * cloud, and how both wirings build it from the kernel's ports. The area's own handlers use it
 * without declaring it; other areas list its name in `uses`.
 */
export interface PortProvision<T = unknown> {
  readonly resources: PortResources;
  /** Called once per process by `createPorts`, after the kernel's ports exist. */
  readonly create: (kernel: KernelPorts) => T;
}

/**
 * One area of the platform, as data: everything the wirings need to serve it. The local platform,
 * the CDK stack and the generated Lambda entries are derived from the list of these (areas.ts); a
 * function gets grants and configuration for its own area's declarations only.
 */
export interface AreaModule {
  /** Its folder under `functions/`, and the prefix of its route and entry-point ids. */
  readonly name: string;
  /** The folder relative to the repository root, when it is not `functions/<name>` (sample areas in tests). */
  readonly folder?: string;
  readonly routes: readonly RouteSpec[];
  readonly entryPoints: readonly EntryPointSpec[];
  /** Tables this area owns: both wirings create them. Code reaches them only through ports. */
  readonly tables: readonly TableSpec[];
  readonly buckets: readonly BucketSpec[];
  /**
   * Ports the area's handlers and services use beyond the kernel's (authentication, rate limits,
   * config, clock, log) and their own area's: kernel ports (`PORT_RESOURCES`) or ports other areas
   * provide. Locally an undeclared port throws when touched; in the cloud its resources are simply
   * not granted. Names are checked when the module list is loaded (`checkAreas`).
   */
  readonly uses: readonly string[];
  /** Ports this area provides, by name: members of `Ports` once the module is in the list. */
  readonly provides: Readonly<Record<string, PortProvision>>;
  /**
   * The area's own configuration variables (zod, parsed with the kernel's by `parseConfig`), which
   * join `Config` once the module is in the list. Each must be optional or have a default, since
   * the functions of other areas do not receive them.
   */
  readonly settings: z.ZodRawShape;
  /**
   * Files the area's code reads at run time, relative to the repository root (the API reference's
   * viewer). Locally they are read where they are; in the cloud they are copied into the area's
   * function bundle at the same relative path, so the same lookup finds them in both wirings.
   */
  readonly runtimeFiles: readonly string[];
  /** Browser scripts the area publishes on a host of their own (the embed widget): see `StaticAssetSpec`. */
  readonly assets: readonly StaticAssetSpec[];
}
