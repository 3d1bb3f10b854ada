import { actionsArea } from '../../functions/actions/actions.module.ts';
import { adminArea } from '../../functions/admin/admin.module.ts';
import { agentsArea } from '../../functions/agents/agents.module.ts';
import { channelsArea } from '../../functions/channels/channels.module.ts';
import { coreArea } from '../../functions/core/core.module.ts';
import { cronArea } from '../../functions/cron/cron.module.ts';
import { keysArea } from '../../functions/keys/keys.module.ts';
import { knowledgeArea } from '../../functions/knowledge/knowledge.module.ts';
import { logsArea } from '../../functions/logs/logs.module.ts';
import { mcpArea } from '../../functions/mcp/mcp.module.ts';
import { oauthArea } from '../../functions/oauth/oauth.module.ts';
import { platformToolsArea } from '../../functions/platform-tools/platform-tools.module.ts';
import { embedArea } from '../../functions/embed/embed.module.ts';
import { discoveryArea } from '../../functions/discovery/discovery.module.ts';
import { referenceArea } from '../../functions/reference/reference.module.ts';
import { searchArea } from '../../functions/search/search.module.ts';
import { skillsArea } from '../../functions/skills/skills.module.ts';
import { starsArea } from '../../functions/stars/stars.module.ts';
import { tokensArea } from '../../functions/tokens/tokens.module.ts';
import { usersArea } from '../../functions/users/users.module.ts';
import { voiceArea } from '../../functions/voice/voice.module.ts';
import { websitesArea } from '../../functions/websites/websites.module.ts';
import { analyticsArea } from '../../functions/analytics/analytics.module.ts';
import { taskBoardArea } from '../../functions/task-board/task-board.module.ts';
import { billingArea } from '../../functions/billing/billing.module.ts';
import { codeServerArea } from '../../functions/code-server/code-server.module.ts';
import type { AreaModule } from './types.ts';

/**
 * Every area of the platform. The routes, tables and buckets of the manifest, the local platform,
 * the CDK stack and each function's grants are all derived from this list: an area joins with its
 * folder under `functions/`, its import and its entry here (`npm run new:area` writes all three).
 */
export const areas = [
  coreArea,
  discoveryArea,
  usersArea,
  tokensArea,
  agentsArea,
  actionsArea,
  mcpArea,
  platformToolsArea,
  keysArea,
  oauthArea,
  logsArea,
  adminArea,
  referenceArea,
  searchArea,
  knowledgeArea,
  skillsArea,
  starsArea,
  cronArea,
  websitesArea,
  voiceArea,
  channelsArea,
  embedArea,
  analyticsArea,
  taskBoardArea,
  billingArea,
  codeServerArea,
] as const;

// The kernel's `Config`, `Ports`, `TableName` and `BucketName` read the list from here, so the
// kernel need not import this file (which imports every area, and so the kernel): functions/core/area-list.ts.
declare module '../../functions/core/area-list.ts' {
  interface AreaList {
    readonly areas: typeof areas;
  }
}

const byName = new Map<string, AreaModule>(areas.map((area) => [area.name, area]));

/** The module of `name`; an unknown area is a bug in the manifest, so it throws. */
export function areaNamed(name: string): AreaModule {
  const area = byName.get(name);
  if (area === undefined) throw new Error(`No area module named ${name} in lib/manifest/areas.ts`);
  return area;
}
