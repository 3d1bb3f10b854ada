import { chunkText } from './chunk-text.ts';
import type { SearchHit, SearchIndex, SearchPartition } from './search-index.ts';

/**
 * The public resource catalogue in the search engine (`GET /search`, SPEC 4.7): public agents, MCP
 * servers, the tools of their live versions and skills, all in one shared partition. Areas call
 * `syncResource` in the request that changes a resource, so a private, deleted or renamed one is
 * out of (or renamed in) search when that request answers.
 */

export const RESOURCE_PARTITION: SearchPartition = { index: 'resources', owner: 'public' };

export type ResourceType = 'agent' | 'mcp' | 'skill';
/** What a search result may be: a resource, or one tool of a public MCP server. */
export type ResultType = ResourceType | 'mcp-tool';

/** A resource as search shows it; only public ones are ever indexed. */
export interface PublicResource {
  readonly resourceType: ResourceType;
  readonly resourceId: string;
  readonly name: string;
  readonly description: string;
  /** `{alias}/{name}`. */
  readonly slug: string;
  /** The owner's alias when indexed; results show the owner's alias at query time (search.service.ts). */
  readonly owner: string;
  readonly ownerId: string;
  /** More searchable text: a skill's SKILL.md body. */
  readonly body?: string;
  /** An MCP server's tools in its live version: each is a result of type `mcp-tool`. */
  readonly tools?: readonly { readonly name: string; readonly description?: string }[];
}

/** The group of a resource's own documents, and of an MCP server's tools. */
export function resourceGroup(type: ResultType, resourceId: string): string {
  return `${type}/${resourceId}`;
}

/**
 * Puts the resource in search as it is now, or takes it out (`null`: private, deleted, or never
 * public). Idempotent: call it after every change that could alter what search shows.
 */
export async function syncResource(index: SearchIndex, resourceType: ResourceType, resourceId: string, resource: PublicResource | null): Promise<void> {
  const own = resourceGroup(resourceType, resourceId);
  const tools = resourceGroup('mcp-tool', resourceId);
  if (resource === null) {
    await Promise.all([index.deleteGroup(RESOURCE_PARTITION, own), ...(resourceType === 'mcp' ? [index.deleteGroup(RESOURCE_PARTITION, tools)] : [])]);
    return;
  }
  const fields = {
    resultType: resourceType,
    resourceId,
    name: resource.name,
    description: resource.description,
    slug: resource.slug,
    owner: resource.owner,
    ownerId: resource.ownerId,
  };
  // The name and description lead the first document, so they weigh in every match of it; a long body goes in chunks.
  const head = `${resource.name.replace(/[-_]/g, ' ')} ${resource.name}\n${resource.description}`;
  const bodyChunks = resource.body === undefined ? [] : chunkText(resource.body);
  const documents = [{ id: '0', text: `${head}\n${bodyChunks[0] ?? ''}`.trim() }, ...bodyChunks.slice(1).map((text, i) => ({ id: String(i + 1), text }))];
  const writes = [index.putGroup(RESOURCE_PARTITION, { group: own, fields, documents })];
  if (resourceType === 'mcp') {
    // A tool's name is its document id, and one write may not hold two items of one key.
    const uniqueTools = [...new Map((resource.tools ?? []).map((tool) => [tool.name, tool])).values()];
    const toolDocuments = uniqueTools.map((tool) => ({
      id: tool.name,
      text: `${tool.name.replace(/[-_]/g, ' ')} ${tool.name}\n${tool.description ?? ''}`.trim(),
    }));
    writes.push(
      toolDocuments.length === 0
        ? index.deleteGroup(RESOURCE_PARTITION, tools)
        : index.putGroup(RESOURCE_PARTITION, { group: tools, fields: { ...fields, resultType: 'mcp-tool' }, documents: toolDocuments }),
    );
  }
  await Promise.all(writes);
}

/** A search hit as a result: a tool's hit names the tool; several hits of one resource are one result. */
export interface ResourceResult {
  readonly resourceId: string;
  readonly resourceType: ResultType;
  readonly name: string;
  readonly description: string;
  readonly slug: string;
  readonly owner: string;
  /** Empty for resources indexed before owner ids were. */
  readonly ownerId: string;
  readonly score: number;
}

/** The best result per resource (or per tool), in the order of `hits`, which come best first. */
export function toResourceResults(hits: readonly SearchHit[]): ResourceResult[] {
  const seen = new Set<string>();
  const results: ResourceResult[] = [];
  for (const hit of hits) {
    const type = hit.fields['resultType'] as ResultType;
    const key = type === 'mcp-tool' ? `${hit.group}/${hit.id}` : hit.group;
    if (seen.has(key)) continue;
    seen.add(key);
    results.push({
      resourceId: hit.fields['resourceId'] ?? '',
      resourceType: type,
      name: type === 'mcp-tool' ? hit.id : (hit.fields['name'] ?? ''),
      description: type === 'mcp-tool' ? hit.text.split('\n').slice(1).join('\n') : (hit.fields['description'] ?? ''),
      slug: hit.fields['slug'] ?? '',
      owner: hit.fields['owner'] ?? '',
      ownerId: hit.fields['ownerId'] ?? '',
      score: hit.score,
    });
  }
  return results;
}
