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
  if (entryPoint !== undefined && !definesFunction(source, entryPoint)) {
    const other = entryPoint === 'create_agent' ? 'create_bidi_agent' : 'create_agent';
    const kind = entryPoint === 'create_agent' ? 'a text agent (agentType omitted or "text")' : 'a voice agent (agentType "bidi")';
    const hint = definesFunction(source, other)
      ? `; it defines ${other}(), which is for ${entryPoint === 'create_agent' ? 'voice agents' : 'text agents'}`
      : '';
    violations.push(`${field}: line 1: the source of ${kind} must define ${entryPoint}() at the top level${hint}`);
  }
  if (violations.length > 0) throw new ValidationError('Invalid request body', violations);
}

/**
 * Whether the source defines `name` as a top-level function: the entry point the runtime calls
 * (`create_agent()` for text agents, `create_bidi_agent()` for voice agents). The runtime's checker
 * has parsed the source by now, so a line-based look at unindented `def`s is exact enough.
 */
function definesFunction(source: string, name: string): boolean {
  return new RegExp(`^(?:async\\s+)?def\\s+${name}\\s*\\(`, 'm').test(source);
}
