import { ValidationError } from '../core/errors.ts';
import type { Compute } from './compute.ts';

/**
 * Runs the runtime's static checker on user source (agents and actions alike, SPEC part 2). A
 * refused source is a 400 `INVALID_PARAMETERS` listing every violation with its line, under the
 * name of the field that carried the source (`sourceCode`, or `code` for inline actions).
 */
export async function checkSource(compute: Pick<Compute, 'check'>, source: string, field = 'sourceCode'): Promise<void> {
  const result = await compute.check(source);
  if (!result.ok) {
    throw new ValidationError(
      'Invalid request body',
      result.violations.map((v) => `${field}: line ${v.line}: ${v.message}`),
    );
  }
}
