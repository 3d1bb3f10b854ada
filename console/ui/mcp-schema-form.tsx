import { Checkbox, Select, TextArea, TextInput } from './form.tsx';
import { kindOf, type ObjectSchema, type SchemaValues } from '../pages/mcp/schema.ts';

export { argumentsOf, initialValues, type ObjectSchema, type PropertySchema, type SchemaValues } from '../pages/mcp/schema.ts';

/**
 * The fields of a JSON Schema object: a text field per string or number, a number field per
 * integer, a choice per enum, a checkbox per boolean, and a JSON field for anything nested.
 * Required fields say so in their label.
 */
export function SchemaFields(props: {
  schema: ObjectSchema | undefined;
  values: SchemaValues;
  onValues: (values: SchemaValues) => void;
  errors?: Readonly<Record<string, string>>;
}) {
  const properties = Object.entries(props.schema?.properties ?? {});
  const required = new Set(props.schema?.required ?? []);
  if (properties.length === 0) return <p class="muted">It takes no arguments.</p>;
  const set = (name: string, value: string | boolean) => props.onValues({ ...props.values, [name]: value });
  return (
    <div class="schema-fields">
      {properties.map(([name, property]) => {
        const kind = kindOf(property);
        const label = `${property.title ?? name}${required.has(name) ? ' (required)' : ''}`;
        const typeHint = kind === 'json' ? `JSON${typeof property.type === 'string' ? ` ${property.type}` : ''}` : kind;
        const hint = [property.description, typeHint].filter(Boolean).join(' · ');
        const value = props.values[name];
        const error = props.errors?.[name];
        if (kind === 'boolean')
          return <Checkbox key={name} label={label} hint={property.description} checked={value === true} onChecked={(checked) => set(name, checked)} />;
        if (kind === 'enum') {
          const options = (property.enum ?? []).map(String);
          return (
            <Select
              key={name}
              label={label}
              hint={property.description}
              value={typeof value === 'string' ? value : ''}
              onValue={(v) => set(name, v)}
              options={required.has(name) ? options : [{ value: '', label: '(not set)' }, ...options]}
            />
          );
        }
        if (kind === 'json')
          return (
            <TextArea
              key={name}
              label={label}
              hint={hint}
              error={error}
              rows={4}
              value={typeof value === 'string' ? value : ''}
              onValue={(v) => set(name, v)}
            />
          );
        return (
          <TextInput
            key={name}
            label={label}
            hint={hint}
            error={error}
            // Whole numbers get the browser's number field (its step of 1 refuses fractions); other
            // numbers a text field this form checks, since a number field would refuse 0.5 too.
            type={kind === 'integer' ? 'number' : 'text'}
            required={required.has(name)}
            value={typeof value === 'string' ? value : ''}
            onValue={(v) => set(name, v)}
          />
        );
      })}
    </div>
  );
}
