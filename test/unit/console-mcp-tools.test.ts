import { describe, expect, it } from 'vitest';
import { eventStreamMessages } from '../../console/pages/mcp/event-stream.ts';
import { argumentsOf, initialValues, type ObjectSchema } from '../../console/pages/mcp/schema.ts';

/** The input schema zod gives a tool like the console's MCP template's `forecast`. */
const FORECAST: ObjectSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    days: { type: 'integer', minimum: 1 },
    ratio: { type: 'number' },
    units: { type: 'string', enum: ['metric', 'imperial'] },
    verbose: { type: 'boolean' },
    where: { type: 'object', properties: { lat: { type: 'number' } } },
  },
  required: ['city', 'units'],
};

describe('console MCP tool tester: arguments from a form, answers from an event stream', () => {
  it('starts required choices at their first option and everything else empty', () => {
    // Assess
    expect(initialValues(FORECAST)).toEqual({ city: '', days: '', ratio: '', units: 'metric', verbose: false, where: '' });
  });

  it('makes typed arguments from the fields, leaving empty optional ones out', () => {
    // Act
    const { args, errors } = argumentsOf(FORECAST, { city: 'Oslo', days: '3', ratio: '0.5', units: 'imperial', verbose: true, where: '{"lat": 59.9}' });
    // Assess
    expect(errors).toEqual({});
    expect(args).toEqual({ city: 'Oslo', days: 3, ratio: 0.5, units: 'imperial', verbose: true, where: { lat: 59.9 } });
    expect(argumentsOf(FORECAST, { city: 'Oslo', days: '', ratio: '', units: 'metric', verbose: false, where: '' }).args).toEqual({
      city: 'Oslo',
      units: 'metric',
    });
  });

  it('names the problem of each field that makes no argument', () => {
    // Act
    const { errors } = argumentsOf(FORECAST, { city: ' ', days: '1.5', ratio: 'many', units: 'metric', verbose: false, where: '{lat' });
    // Assess
    expect(errors).toEqual({ city: 'Required.', days: 'Must be a whole number.', ratio: 'Not a number.', where: 'Not valid JSON.' });
  });

  it('reads the answer to a request from an event stream, data lines joined', () => {
    // Prepare
    const body = [
      'event: message',
      'id: 1',
      'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
      '',
      'event: message',
      'data: {"jsonrpc":"2.0","id":7,',
      'data: "result":{"tools":[]}}',
      '',
      '',
    ].join('\r\n');
    // Act
    const messages = eventStreamMessages(body);
    // Assess
    expect(messages).toHaveLength(2);
    expect(messages[1]).toEqual({ jsonrpc: '2.0', id: 7, result: { tools: [] } });
  });
});
