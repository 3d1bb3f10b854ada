import { ServiceUnavailableError, ValidationError } from '../core/errors.ts';
import { ComputeUnavailableError, type Compute } from './compute.ts';

/**
 * Runs the runtime's static checker on user source (agents and actions alike, SPEC part 2). A
 * refused source is a 400 `INVALID_PARAMETERS` listing every violation with its line, under the
 * name of the field that carried the source (`sourceCode`, or `code` for inline actions). No
 * runtime to check with is a 503 `RUNTIME_UNAVAILABLE`.
 */
export async function checkSource(
  compute: Pick<Compute, 'check'>,
  source: string,
  field = 'sourceCode',
  entryPoint?: 'create_agent' | 'create_bidi_agent',
): Promise<void> {
  let result: Awaited<ReturnType<Compute['check']>>;
  try {
    result = await compute.check(source);
  } catch (error) {
    // The adapter's message says what is missing (e.g. which Python to install): the operator,
    // who is often the caller of a local platform, needs it to fix the cause.
    if (error instanceof ComputeUnavailableError) throw new ServiceUnavailableError(`User code cannot run here now: ${error.message}`, 'RUNTIME_UNAVAILABLE');
    throw error;
  }
  const violations = result.ok ? [] : result.violations.map((v) => `${field}: line ${v.line}: ${v.message}`);
  // The runtime calls this function (create_agent for text agents, create_bidi_agent for voice ones).
  if (entryPoint !== undefined && !new RegExp(`^(async\\s+)?def\\s+${entryPoint}\\s*\\(`, 'm').test(source))
    violations.push(`${field}: line 1: must define ${entryPoint}() at the top level`);
  if (violations.length > 0) throw new ValidationError('Invalid request body', violations);
}
