/**
 * The area list (lib/manifest/areas.ts) as the kernel's types see it. `Config`, `Ports`,
 * `TableName` and `BucketName` follow the listed areas, yet the kernel must not import the list:
 * the list imports the areas, and the areas import the kernel. So areas.ts registers the list in
 * `AreaList` by declaration merging (`declare module`), and the kernel reads it back from this file,
 * which imports nothing. Every import then points from the areas to the kernel, type imports
 * included (test/unit/import-cycles.test.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by lib/manifest/areas.ts
export interface AreaList {}

/** What the kernel's types read of an area module (lib/manifest/types.ts, `AreaModule`). */
interface ListedAreaShape {
  readonly tables: readonly { readonly name: string }[];
  readonly buckets: readonly { readonly name: string }[];
}

/**
 * Any listed area module, with its literal types. `never` in a program without areas.ts: then no
 * area setting, area port, table or bucket name type-checks, rather than all of them silently.
 */
export type ListedArea = AreaList extends { readonly areas: infer L extends readonly ListedAreaShape[] } ? L[number] : never;

/** Logical names of the listed areas' tables. */
export type TableName = ListedArea['tables'][number]['name'];

/** Logical names of the listed areas' buckets. */
export type BucketName = ListedArea['buckets'][number]['name'];
