import * as z from 'zod';
import { serviceNameSchema } from '../keys/key.schema.ts';
import { actionIdSchema, RESERVED_EVENT_FIELD } from './action-fields.ts';

export { actionIdSchema, RESERVED_EVENT_FIELD };

/** SPEC part 2 (Action) and part 8 (action defaults). */
export const ACTION_DEFAULTS = { memoryMb: 128, timeoutSec: 30, runtime: 'python3.12', visibility: 'private', status: 'development' } as const;
/** Memory sizes an action (or an inline run) may ask for, in MB. */
export const ACTION_MEMORY_MB = [128, 256, 512, 1024] as const;
export const MAX_ACTION_TIMEOUT_SEC = 300;
/** Largest action source accepted (the spec leaves it open): keeps items well under DynamoDB's 400 KB. */
export const MAX_SOURCE_BYTES = 256 * 1024;
const sourceCodeSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_SOURCE_BYTES, `must be at most ${MAX_SOURCE_BYTES} bytes`);

export const memoryMbSchema = z
  .number()
  .int()
  .refine((n) => (ACTION_MEMORY_MB as readonly number[]).includes(n), `must be one of ${ACTION_MEMORY_MB.join(', ')}`);

export const timeoutSecSchema = z.number().int().min(1).max(MAX_ACTION_TIMEOUT_SEC);

const visibilitySchema = z.enum(['private', 'public']);
export const actionStatusSchema = z.enum(['active', 'development', 'deprecated']);
/** A string first, so a missing runtime is reported as required rather than as a wrong value. */
const runtimeSchema = z
  .string()
  .refine((r) => r === 'python3.12', 'must be python3.12')
  .transform(() => 'python3.12' as const);

/** A declared parameter: `required` ones must be present (not empty) before the action runs. */
export const parameterSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be an identifier of at most 64 characters (letters, digits, "_")')
    .refine((n) => n !== RESERVED_EVENT_FIELD, `"${RESERVED_EVENT_FIELD}" is reserved: the platform puts the owner's keys there`),
  type: z.string().trim().min(1).max(32).default('string'),
  required: z.boolean().default(false),
  description: z.string().max(500).optional(),
});

const parametersSchema = z
  .array(parameterSchema)
  .max(50)
  .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'parameter names must be unique');

const tagsSchema = z
  .array(z.string().trim().min(1).max(64))
  .max(20)
  .transform((tags) => [...new Set(tags)]);
const keysNeededSchema = z
  .array(serviceNameSchema)
  .max(20)
  .transform((names) => [...new Set(names)]);
const categorySchema = z.string().trim().min(1, 'must not be empty').max(64);
const actionNameSchema = z.string().trim().min(1, 'must not be empty').max(128);
const descriptionSchema = z.string().trim().min(1, 'must not be empty').max(2000);

export const createActionBody = z.object({
  actionId: actionIdSchema.optional(),
  actionName: actionNameSchema,
  description: descriptionSchema,
  runtime: runtimeSchema,
  sourceCode: sourceCodeSchema,
  category: categorySchema,
  visibility: visibilitySchema.default(ACTION_DEFAULTS.visibility),
  status: actionStatusSchema.default(ACTION_DEFAULTS.status),
  memoryMb: memoryMbSchema.default(ACTION_DEFAULTS.memoryMb),
  timeoutSec: timeoutSecSchema.default(ACTION_DEFAULTS.timeoutSec),
  tags: tagsSchema.default([]),
  parameters: parametersSchema.default([]),
  keysNeeded: keysNeededSchema.default([]),
});

export const updateActionBody = z.object({
  actionId: actionIdSchema,
  actionName: actionNameSchema.optional(),
  description: descriptionSchema.optional(),
  runtime: runtimeSchema.optional(),
  sourceCode: sourceCodeSchema.optional(),
  category: categorySchema.optional(),
  visibility: visibilitySchema.optional(),
  status: actionStatusSchema.optional(),
  memoryMb: memoryMbSchema.optional(),
  timeoutSec: timeoutSecSchema.optional(),
  tags: tagsSchema.optional(),
  parameters: parametersSchema.optional(),
  keysNeeded: keysNeededSchema.optional(),
});

export const actionIdBody = z.object({ actionId: actionIdSchema });
export const actionIdParams = z.object({ actionId: actionIdSchema });

export const listActionsQuery = z.object({
  visibility: z.enum(['all', 'public', 'private']).default('all'),
  status: actionStatusSchema.optional(),
  category: z.string().trim().min(1).max(64).optional(),
  runtime: z.enum(['python', 'nodejs']).optional(),
  nameContains: z.string().trim().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

/** A GET run's parameters: the query string, names the action's own (SPEC 4.3). */
export const ACTION_QUERY = "The action's own parameters, any names, each a string (`?city=Paris`); the handler's `event` holds them as given.";

/** Parameters of a run: the POST body must be a JSON object (GET parameters come from the query string). */
export const runBody = z.record(z.string(), z.unknown(), { error: 'must be a JSON object of parameters' });

/** `POST /action/python-128mb/inline-code`: `timeout` in seconds, `memory` in MB. */
export const inlineCodeBody = z.object({
  code: sourceCodeSchema,
  event: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).default({}),
  timeout: timeoutSecSchema.default(ACTION_DEFAULTS.timeoutSec),
  memory: memoryMbSchema.default(ACTION_DEFAULTS.memoryMb),
});

export type ActionStatus = z.infer<typeof actionStatusSchema>;
export type ActionParameter = z.infer<typeof parameterSchema>;

/** A stored action. `ownerId` is the tenant its code runs for. */
export interface ActionRecord {
  readonly actionId: string;
  readonly ownerId: string;
  readonly actionName: string;
  /** Lower-cased name, for the case-insensitive `nameContains` filter. */
  readonly nameLower: string;
  readonly description: string;
  readonly runtime: 'python3.12';
  readonly sourceCode: string;
  readonly category: string;
  readonly visibility: 'private' | 'public';
  readonly status: ActionStatus;
  readonly memoryMb: number;
  readonly timeoutSec: number;
  readonly tags: readonly string[];
  readonly parameters: readonly ActionParameter[];
  readonly keysNeeded: readonly string[];
  /** Present only on public actions others may run (not `development`): the sparse `publicActions` index. */
  readonly publicListing?: 'public';
  readonly createdAt: number;
  readonly updatedAt: number;
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const parameterResponse = z.object({ name: z.string(), type: z.string(), required: z.boolean(), description: z.string().optional() });

/** SPEC part 2, "Action", as `presentAction` shows it; `sourceCode` only in `/action/info/{actionId}`. */
export const actionResponse = z.object({
  actionId: z.string(),
  actionName: z.string(),
  description: z.string(),
  runtime: z.literal('python3.12'),
  category: z.string(),
  visibility: visibilitySchema,
  status: actionStatusSchema,
  memoryMb: z.number().int(),
  timeoutSec: z.number().int(),
  tags: z.array(z.string()).readonly(),
  parameters: z.array(parameterResponse).readonly(),
  keysNeeded: z.array(z.string()).readonly().describe('Services whose keys the owner must have stored'),
  owner: z.string().nullable().describe("The owner's alias (null before the owner chose one)"),
  oneClickUrl: z.string().describe('Runs the action through the router'),
  directUrl: z.string().describe('Runs the action directly, bypassing the router'),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  updatedAt: z.number().describe('Milliseconds since the epoch'),
  sourceCode: z.string().optional(),
});

export const actionListResponse = z.object({
  actions: z.array(actionResponse),
  count: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const actionCreatedResponse = z.object({ actionId: z.string(), message: z.string() });
export const actionUpdatedResponse = z.object({ actionId: z.string(), message: z.string(), action: actionResponse });
export const actionDeletedResponse = z.object({ actionId: z.string(), message: z.string() });

/** SPEC 4.3's execution result `data` (its `meta` carries requestId, executionTime in ms, memoryMb, creditsUsed). */
export const executionResponse = z.object({
  statusCode: z.number().int().describe("The `statusCode` the action's handler returned"),
  body: z.unknown().describe("The `body` the action's handler returned"),
  headers: z.record(z.string(), z.string()).optional(),
});
