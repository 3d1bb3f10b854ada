import type { operations } from '../../../clients/typescript/src/index.ts';
import type { ObjectSchema, PropertySchema } from '../mcp/schema.ts';

/** An action as `/action/info/{actionId}` answers it (its source included for the owner). */
export type ActionRecord = operations['getActionInfo']['responses']['2XX']['content']['application/json']['data'];

export type ActionParameter = ActionRecord['parameters'][number];

export type ActionStatus = ActionRecord['status'];

export function statusTone(status: ActionStatus): 'ok' | 'warn' | 'neutral' {
  return status === 'active' ? 'ok' : status === 'deprecated' ? 'warn' : 'neutral';
}

const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);

/** An action's declared parameters as the JSON Schema the run form is built from. */
export function parametersSchema(parameters: readonly ActionParameter[]): ObjectSchema {
  const properties: Record<string, PropertySchema> = {};
  for (const parameter of parameters) {
    const type = parameter.type.toLowerCase();
    properties[parameter.name] = {
      type: SCHEMA_TYPES.has(type)
        ? type
        : type === 'float' || type === 'double'
          ? 'number'
          : type === 'int'
            ? 'integer'
            : type === 'bool'
              ? 'boolean'
              : 'string',
      ...(parameter.description === undefined ? {} : { description: parameter.description }),
    };
  }
  return { type: 'object', properties, required: parameters.filter((p) => p.required).map((p) => p.name) };
}
