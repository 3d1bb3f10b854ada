import { ServiceUnavailableError, ValidationError } from '../core/errors.ts';
import { ComputeUnavailableError, type Compute } from './compute.ts';

/** One rule a source breaks, at its line (1-based). */
export interface SourceProblem {
  readonly line: number;
  readonly message: string;
}

/**
 * Runs the runtime's static checker on user source (agents and actions alike, SPEC part 2) and
 * lists every rule it breaks with its line, without refusing anything: what an editor shows
 * before saving (`POST /agent/check`). No runtime to check with is a 503 `RUNTIME_UNAVAILABLE`.
 */
export async function sourceProblems(
  compute: Pick<Compute, 'check'>,
  source: string,
  entryPoint?: 'create_agent' | 'create_bidi_agent',
): Promise<SourceProblem[]> {
  let result: Awaited<ReturnType<Compute['check']>>;
  try {
    result = await compute.check(source);
  } catch (error) {
    // The adapter's message says what is missing (e.g. which Python to install): the operator,
    // who is often the caller of a local platform, needs it to fix the cause.
    if (error instanceof ComputeUnavailableError) throw new ServiceUnavailableError(`User code cannot run here now: ${error.message}`, 'RUNTIME_UNAVAILABLE');
    throw error;
  }
  const problems: SourceProblem[] = result.ok ? [] : result.violations.map((v) => ({ line: v.line, message: v.message }));
  // The runtime calls this function (create_agent for text agents, create_bidi_agent for voice ones).
  if (entryPoint !== undefined && !new RegExp(`^(async\\s+)?def\\s+${entryPoint}\\s*\\(`, 'm').test(source))
    problems.push({ line: 1, message: `must define ${entryPoint}() at the top level` });
  return problems;
}

/**
 * The checker as a gate (create, update, inline runs): a refused source is a 400
 * `INVALID_PARAMETERS` listing every violation with its line, under the name of the field that
 * carried the source (`sourceCode`, or `code` for inline actions).
 */
export async function checkSource(
  compute: Pick<Compute, 'check'>,
  source: string,
  field = 'sourceCode',
  entryPoint?: 'create_agent' | 'create_bidi_agent',
): Promise<void> {
  const problems = await sourceProblems(compute, source, entryPoint);
  if (problems.length > 0)
    throw new ValidationError(
      'Invalid request body',
      problems.map((p) => `${field}: line ${p.line}: ${p.message}`),
    );
}
