import { ValidationError } from '../errors.ts';

/** Opaque pagination cursor: the base64url JSON of DynamoDB's LastEvaluatedKey. */
export function encodeCursor(key: Record<string, unknown> | undefined): string | null {
  return key === undefined ? null : Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The key a cursor stands for; a cursor that was not made by `encodeCursor` is a 400. */
export function decodeCursor(cursor: string | null | undefined): Record<string, unknown> | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ValidationError('Invalid query parameters', ['cursor: is not a cursor returned by this endpoint']);
}

export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}
