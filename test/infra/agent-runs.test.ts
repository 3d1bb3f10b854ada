/**
 * Agent runs in the cloud (the `agentRuns` port): cron jobs and channels run agents by invoking the
 * agents function, which holds the chat service, with the Lambda Invoke API. The callers (the cron
 * and channels functions and their queue consumers) may invoke that one function and are told its
 * name; no other function may; the agents function lives as long as a run; and the callers' code
 * holds no chat service, only the adapter.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_RUN_TIMEOUT_SEC } from '../../functions/agents/agent-runs.ts';
import type { PlatformFunction } from '../../lib/cloud/platform-function.ts';
import { json, logicalIdOf, roleStatements, synthPlatform, type SynthesizedPlatform } from './synth-platform.ts';

const actions = (statement: { Action: string | string[] }) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);
const roleOf = (platform: SynthesizedPlatform, fn: PlatformFunction) => logicalIdOf(platform, (fn.function as unknown as { role: never }).role);

/** Every platform function of the stack with its name, the way the stack keeps them. */
function functionsOf(platform: SynthesizedPlatform): [string, PlatformFunction][] {
  const fns = platform.stack.functions;
  return [
    ...[...fns.areas].map(([area, fn]) => [`Area-${area}`, fn] as [string, PlatformFunction]),
    ...[...fns.streams].map(([host, s]) => [`Stream-${host}`, s.function] as [string, PlatformFunction]),
    ...[...fns.schedules].map(([area, fn]) => [`Schedule-${area}`, fn] as [string, PlatformFunction]),
    ...[...fns.queueConsumers].map(([area, fn]) => [`Queue-${area}`, fn] as [string, PlatformFunction]),
    ...[...fns.storageEvents].map(([area, fn]) => [`Storage-${area}`, fn] as [string, PlatformFunction]),
    ['Fallback', fns.fallback],
  ];
}

const CALLERS = ['Area-channels', 'Queue-channels', 'Area-cron', 'Queue-cron'];

describe('agent runs in the cloud', () => {
  it('lets the cron and channels functions, and only them, invoke the agents function, and names it to them', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const agentsFn = platform.stack.functions.areas.get('agents')!;
    const agentsId = logicalIdOf(platform, agentsFn.function);

    // Act
    const invokers = functionsOf(platform)
      .filter(([, fn]) =>
        roleStatements(template, roleOf(platform, fn)).some(
          (s) => actions(s).includes('lambda:InvokeFunction') && JSON.stringify(s.Resource).includes(agentsId),
        ),
      )
      .map(([name]) => name);
    const named = functionsOf(platform)
      .filter(
        ([, fn]) => template.Resources[logicalIdOf(platform, fn.function)]!.Properties!['Environment']?.Variables?.['AGENT_RUNS_FUNCTION_NAME'] !== undefined,
      )
      .map(([name, fn]) => [name, template.Resources[logicalIdOf(platform, fn.function)]!.Properties!['Environment'].Variables['AGENT_RUNS_FUNCTION_NAME']]);

    // Assess
    expect(invokers.sort()).toEqual([...CALLERS].sort());
    expect(named.map(([name]) => name).sort()).toEqual([...CALLERS].sort());
    for (const [, value] of named) expect(value).toEqual({ Ref: agentsId });
  });

  it('gives the agents function the time of the longest run, and the cron queue no run-token secret (it mints none)', () => {
    // Prepare
    const platform = synthPlatform();
    const template = json(platform.main);
    const props = (fn: PlatformFunction) => template.Resources[logicalIdOf(platform, fn.function)]!.Properties!;

    // Act
    const agents = props(platform.stack.functions.areas.get('agents')!);
    const cronQueue = props(platform.stack.functions.queueConsumers.get('cron')!);

    // Assess
    expect(agents['Timeout']).toBeGreaterThan(AGENT_RUN_TIMEOUT_SEC);
    expect(agents['Timeout']).toBeLessThanOrEqual(900);
    expect(Object.keys(cronQueue['Environment'].Variables)).not.toContain('RUN_TOKEN_SECRET_ARN');
  });

  it("serves runs from the agents function's entry, and gives the callers the adapter, not the chat service", () => {
    // Prepare
    const platform = synthPlatform();
    const entry = (name: string) => readFileSync(join(platform.entriesDir, name), 'utf8');

    // Act
    const agents = entry('agents.entry.ts');
    const callers = ['channels.entry.ts', 'queue-channels.entry.ts', 'cron.entry.ts', 'queue-cron.entry.ts'].map(entry);

    // Assess
    expect(agents).toMatch(/import \{ serveAgentRun \} from ".*functions\/agents\/agent-runs\.service\.ts";/);
    expect(agents).toMatch(/\}, serveAgentRun\);\n$/);
    for (const source of callers) {
      expect(source).toMatch(/agentRuns: lambdaAgentRuns/);
      expect(source).not.toMatch(/agent-runs\.service|chat\.service/);
    }
  });
});
