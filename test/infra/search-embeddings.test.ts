/**
 * The search engine's embedding model in the cloud stack: off by default (lexical search, no Bedrock
 * access anywhere); with `searchEmbeddings`, exactly the functions whose areas use the `searchIndex`
 * port get its settings and may invoke that one model.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';
import { areas } from '../../lib/manifest/areas.ts';
import { routes } from '../../lib/manifest/routes.ts';
import { cdkJsonContext, json, synthPlatform, type TemplateJson } from './synth-platform.ts';

const MODEL = 'amazon.titan-embed-text-v2:0';
const SEARCH_VARIABLES = ['SEARCH_EMBEDDER', 'EMBEDDING_MODEL_ID', 'EMBEDDING_DIMENSIONS'];

let outdir: string | undefined;
afterAll(() => {
  if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
});

function synthWithEmbeddings(): { stack: PlatformStack; template: TemplateJson } {
  outdir = mkdtempSync(join(tmpdir(), 'platform-infra-search-'));
  const app = new App({ outdir, analyticsReporting: false, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new PlatformStack(app, 'search-test', { stage: 'test', version: '0', searchEmbeddings: { modelId: MODEL, dimensions: 1024 } });
  app.synth();
  return { stack, template: Template.fromStack(stack).toJSON() as TemplateJson };
}

/** Each Lambda function's search settings, by logical id. */
function searchVariables(template: TemplateJson): Map<string, Record<string, unknown>> {
  return new Map(
    Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id, r]) => [
        id,
        Object.fromEntries(Object.entries(r.Properties?.['Environment']?.Variables ?? {}).filter(([name]) => SEARCH_VARIABLES.includes(name))),
      ]),
  );
}

/** The roles allowed bedrock:InvokeModel, with the resources. */
function bedrockGrants(template: TemplateJson): { roles: unknown; resource: unknown }[] {
  return Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((p) =>
      (p.Properties?.['PolicyDocument'].Statement as { Action: unknown; Resource: unknown }[])
        .filter((s) => JSON.stringify(s.Action).includes('bedrock:'))
        .map((s) => ({ roles: p.Properties?.['Roles'], resource: s.Resource })),
    );
}

describe('search embeddings in the cloud stack', () => {
  it('gives no function Bedrock access or search settings by default', () => {
    const template = json(synthPlatform().main);
    expect(bedrockGrants(template)).toEqual([]);
    expect([...searchVariables(template).values()].filter((v) => Object.keys(v).length > 0)).toEqual([]);
  });

  it('lets exactly the functions of the areas that search invoke the one model, with its settings', () => {
    // Prepare: knowledge (files), search (GET /search), agents, MCP and skills (they index their public resources), and
    // the streaming host, which serves agents' chat routes with the agents area's ports (not the site host: websites do not search)
    const { stack, template } = synthWithEmbeddings();
    const searching = areas.filter((area) => area.uses.includes('searchIndex') || 'searchIndex' in area.provides).map((area) => area.name);
    const searchingFunctions = [
      ...searching.map((area) => stack.functions.areas.get(area)),
      stack.functions.storageEvents.get('knowledge'),
      ...[...stack.functions.streams]
        .filter(([host]) => routes.some((r) => r.host === host && r.mode === 'streaming' && searching.includes(r.area)))
        .map(([, stream]) => stream.function),
    ];
    const idOf = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

    // Act
    const variables = searchVariables(template);
    const grants = bedrockGrants(template);

    // Assess
    expect(searching.sort()).toEqual(['agents', 'knowledge', 'mcp', 'platform-tools', 'search', 'skills']);
    expect(searchingFunctions.every((fn) => fn !== undefined)).toBe(true);
    const searchingIds = searchingFunctions.map((fn) => idOf(fn!.function));
    for (const id of searchingIds) expect(variables.get(id)).toEqual({ SEARCH_EMBEDDER: 'bedrock', EMBEDDING_MODEL_ID: MODEL, EMBEDDING_DIMENSIONS: '1024' });
    for (const [id, v] of variables) if (!searchingIds.includes(id)) expect(v, id).toEqual({});
    const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
    expect(grants.map((g) => g.roles).sort(byJson)).toEqual(searchingFunctions.map((fn) => [{ Ref: idOf(fn!.function.role!) }]).sort(byJson));
    for (const grant of grants)
      expect(JSON.stringify(grant.resource)).toMatch(new RegExp(`:bedrock:",\\{"Ref":"AWS::Region"\\},"::foundation-model/${MODEL.replace(/[.:]/g, '\\$&')}"`));
  });
});
