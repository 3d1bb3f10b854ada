import type * as z from 'zod';
import type { KernelPorts } from '../../functions/kernel-ports.ts';
import type {
  AreaModule,
  AuthMode,
  BucketSpec,
  CallerScope,
  EntryPointSpec,
  EnvelopeStyle,
  Host,
  HttpMethod,
  PortProvision,
  PortResources,
  QueueSpec,
  RouteSpec,
  ScheduleSpec,
  ServiceSpec,
  StaticAssetSpec,
  StorageEventSpec,
  TableSpec,
} from './types.ts';

export const KIB = 1024;

/** A route as an area module lists it: the area comes from the module. */
export interface RouteInput {
  method: HttpMethod;
  path: string;
  handler: string;
  auth: AuthMode;
  /**
   * Defaults to `full`, so a route someone forgets to classify stays closed to role and run tokens;
   * only routes that run or read say `role`.
   */
  callers?: CallerScope;
  host?: Host;
  mode?: RouteSpec['mode'];
  style?: EnvelopeStyle;
  timeoutSec?: number;
  maxBodyBytes?: number;
  rateLimit?: RouteSpec['rateLimit'];
  errors?: RouteSpec['errors'];
}

/** Entry points as an area module lists them; defaults: 60 s, three attempts; services 512 MB, 256 CPU units, one task. */
export type EntryPointInput =
  | (Omit<ScheduleSpec, 'id' | 'area' | 'timeoutSec'> & { timeoutSec?: number })
  | (Omit<QueueSpec, 'id' | 'area' | 'timeoutSec' | 'maxAttempts'> & { timeoutSec?: number; maxAttempts?: number })
  | (Omit<StorageEventSpec, 'id' | 'area' | 'timeoutSec'> & { timeoutSec?: number })
  | (Omit<ServiceSpec, 'id' | 'area' | 'memoryMb' | 'cpu' | 'desiredCount'> & { memoryMb?: number; cpu?: number; desiredCount?: number });

export interface AreaInput<
  T extends readonly TableSpec[],
  B extends readonly BucketSpec[],
  P extends Readonly<Record<string, PortProvision>>,
  S extends z.ZodRawShape,
> {
  readonly name: string;
  /** @default `functions/<name>` */
  readonly folder?: string;
  readonly routes?: readonly RouteInput[];
  readonly entryPoints?: readonly EntryPointInput[];
  readonly tables?: T;
  readonly buckets?: B;
  /** Ports of the kernel or of other areas this area's code uses (its own `provides` need no listing). */
  readonly uses?: readonly string[];
  /** Ports this area provides (its stores): both wirings build them, and they join `Ports` by name. */
  readonly provides?: P;
  /** The area's configuration variables, each optional or defaulted (see `AreaModule.settings`). */
  readonly settings?: S;
  /** Files its code reads at run time (see `AreaModule.runtimeFiles`). */
  readonly runtimeFiles?: readonly string[];
  /** Browser scripts it publishes (see `AreaModule.assets`). */
  readonly assets?: readonly StaticAssetSpec[];
}

/** An area module with its table and bucket names and its provided ports kept as literal types (for `TableName` and `Ports`). */
export type DefinedArea<
  T extends readonly TableSpec[],
  B extends readonly BucketSpec[],
  P extends Readonly<Record<string, PortProvision>>,
  S extends z.ZodRawShape,
> = Omit<AreaModule, 'tables' | 'buckets' | 'provides' | 'settings'> & {
  readonly tables: T;
  readonly buckets: B;
  readonly provides: P;
  readonly settings: S;
};

/** A port for a module's `provides`: the cloud resources it reaches, and how it is built from the kernel's ports. */
export function providePort<T>(resources: PortResources, create: (kernel: KernelPorts) => T): PortProvision<T> {
  return { resources, create };
}

/** Fills the defaults every route and entry point shares, so modules list only what differs. */
export function defineArea<
  const T extends readonly TableSpec[] = readonly [],
  const B extends readonly BucketSpec[] = readonly [],
  const P extends Readonly<Record<string, PortProvision>> = Record<never, never>,
  const S extends z.ZodRawShape = Record<never, never>,
>(input: AreaInput<T, B, P, S>): DefinedArea<T, B, P, S> {
  const area = input.name;
  const folder = input.folder === undefined ? {} : { folder: input.folder };
  return {
    name: area,
    ...folder,
    routes: (input.routes ?? []).map((r) => ({ ...route(area, r), ...folder })),
    entryPoints: (input.entryPoints ?? []).map((e) => ({ ...entryPoint(area, e), ...folder })),
    tables: input.tables ?? ([] as unknown as T),
    buckets: input.buckets ?? ([] as unknown as B),
    uses: [...new Set(input.uses ?? [])],
    provides: input.provides ?? ({} as P),
    settings: input.settings ?? ({} as S),
    runtimeFiles: input.runtimeFiles ?? [],
    assets: input.assets ?? [],
  };
}

function route(area: string, input: RouteInput): RouteSpec {
  return {
    id: `${area}.${input.handler}`,
    host: input.host ?? 'base',
    mode: input.mode ?? 'buffered',
    style: input.style ?? 'B',
    timeoutSec: input.timeoutSec ?? 29,
    maxBodyBytes: input.maxBodyBytes ?? 256 * KIB,
    method: input.method,
    path: input.path,
    area,
    handler: input.handler,
    auth: input.auth,
    callers: input.callers ?? 'full',
    ...(input.rateLimit ? { rateLimit: input.rateLimit } : {}),
    ...(input.errors ? { errors: input.errors } : {}),
  };
}

function entryPoint(area: string, input: EntryPointInput) {
  const id = `${area}.${input.handler}`;
  switch (input.kind) {
    case 'schedule':
      return { ...input, id, area, timeoutSec: input.timeoutSec ?? 60 };
    case 'queue':
      return { ...input, id, area, timeoutSec: input.timeoutSec ?? 60, maxAttempts: input.maxAttempts ?? 3 };
    case 'storageEvent':
      return { ...input, id, area, timeoutSec: input.timeoutSec ?? 60 };
    case 'service':
      return { ...input, id, area, memoryMb: input.memoryMb ?? 512, cpu: input.cpu ?? 256, desiredCount: input.desiredCount ?? 1 };
  }
}

/** The entry points of `kind` an area declares, typed as that kind. */
export function entryPointsOf<K extends EntryPointSpec['kind']>(area: Pick<AreaModule, 'entryPoints'>, kind: K): Extract<EntryPointSpec, { kind: K }>[] {
  return area.entryPoints.filter((e): e is Extract<EntryPointSpec, { kind: K }> => e.kind === kind);
}
