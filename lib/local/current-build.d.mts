/** See current-build.mjs. */
export declare function currentBuild(repoRoot: string, buildRoot: string): { main: string; changed: string | null } | null;
