import { spawnSync } from 'node:child_process';
import { findOnPath } from '../../functions/runtimes/os-sandbox.ts';

/**
 * Whether `cfn-lint` is on PATH: looked up, not run (`cfn-lint --version` loads every resource
 * schema, 2 s of CPU, and four files asked). `.ci/run` installs it and stops when it is missing, so
 * CI never skips these checks.
 */
export const HAS_CFN_LINT = findOnPath('cfn-lint') !== null;

/** The reason a skipped cfn-lint test gives in its name. */
export const CFN_LINT_MISSING = 'SKIPPED: cfn-lint is not on PATH; pip install cfn-lint to run it';

export interface CfnLintFinding {
  readonly Level: string;
  readonly Rule: { readonly Id: string };
  readonly Message: string;
  readonly Filename: string;
}

/**
 * Ignored: W3005 (DependsOn already implied by a GetAtt). CDK adds those to every function for its
 * role and default policy; they are harmless and not ours to change.
 */
const IGNORED_RULES = ['W3005'];

/**
 * cfn-lint over `templates` (paths, relative to `cwd` when given), its findings as JSON. Exit
 * status bits are 2 errors, 4 warnings, 8 informational; anything else is a crash.
 */
export function cfnLint(templates: readonly string[], cwd?: string): { findings: CfnLintFinding[]; status: number | null; error: Error | undefined } {
  const run = spawnSync('cfn-lint', ['--format', 'json', '--ignore-checks', ...IGNORED_RULES, '--', ...templates], {
    encoding: 'utf8',
    ...(cwd ? { cwd } : {}),
  });
  return { findings: JSON.parse(run.stdout || '[]') as CfnLintFinding[], status: run.status, error: run.error };
}
