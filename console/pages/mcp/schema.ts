/**
 * The part of JSON Schema the console builds argument forms from (an MCP tool's `inputSchema`, or
 * an action's declared parameters), and the arguments such a form's values make. The fields
 * themselves are `SchemaFields` (console/ui/mcp-schema-form.tsx).
 */
export interface ObjectSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, PropertySchema>>;
  readonly required?: readonly string[];
}

export interface PropertySchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly [key: string]: unknown;
}

/** What each field holds: the text typed (JSON for nested values), or a checkbox's state. */
export type SchemaValues = Readonly<Record<string, string | boolean>>;

export type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export function kindOf(schema: PropertySchema): Kind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => typeof v === 'string' || typeof v === 'number')) return 'enum';
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t !== 'null');
  const type = types.length === 1 ? types[0] : undefined;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** The fields' starting values: each property's `default` where it has one. */
export function initialValues(schema: ObjectSchema | undefined): SchemaValues {
  const values: Record<string, string | boolean> = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const kind = kindOf(property);
    if (kind === 'boolean') values[name] = property.default === true;
    else if (property.default !== undefined) values[name] = kind === 'json' ? JSON.stringify(property.default, null, 2) : String(property.default);
    else values[name] = kind === 'enum' && (schema?.required ?? []).includes(name) ? String(property.enum?.[0] ?? '') : '';
  }
  return values;
}

/**
 * The arguments the fields make, or the problem of each field that makes none (a required field
 * left empty, a number that is not one, JSON that does not parse). Empty optional fields are left out.
 */
export function argumentsOf(schema: ObjectSchema | undefined, values: SchemaValues): { args: Record<string, unknown>; errors: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const required = new Set(schema?.required ?? []);
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const kind = kindOf(property);
    const value = values[name];
    if (kind === 'boolean') {
      if (value === true || required.has(name) || property.default !== undefined) args[name] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value : '';
    if (text.trim() === '') {
      if (required.has(name)) errors[name] = 'Required.';
      continue;
    }
    if (kind === 'number' || kind === 'integer') {
      const number = Number(text);
      if (!Number.isFinite(number)) errors[name] = 'Not a number.';
      else if (kind === 'integer' && !Number.isInteger(number)) errors[name] = 'Must be a whole number.';
      else args[name] = number;
    } else if (kind === 'enum') {
      const option = property.enum?.find((v) => String(v) === text);
      args[name] = option ?? text;
    } else if (kind === 'json') {
      try {
        args[name] = JSON.parse(text);
      } catch {
        errors[name] = 'Not valid JSON.';
      }
    } else args[name] = text;
  }
  return { args, errors };
}
