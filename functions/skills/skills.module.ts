import { defineArea, providePort, KIB } from '../../lib/manifest/define.ts';
import { YAML_PARSER_FILES } from './frontmatter.ts';
import { createSkillStore } from './skill.store.ts';

/**
 * Skills (SPEC 4.5): SKILL.md documents addressed by `{owner}/{name}`, public ones indexed for
 * resource search in the request that changes them.
 */
export const skillsArea = defineArea({
  name: 'skills',
  routes: [
    // SKILL.md may be 256 KB (MAX_SKILL_MD_BYTES, a 413 past it); JSON escaping can double it, so the body limit is higher.
    { method: 'POST', path: '/skills/create', handler: 'create-skill', auth: 'required', maxBodyBytes: 1024 * KIB },
    { method: 'PUT', path: '/skills/update', handler: 'update-skill', auth: 'required', maxBodyBytes: 1024 * KIB },
    { method: 'POST', path: '/skills/delete', handler: 'delete-skill', auth: 'required' },
    { method: 'GET', path: '/skills/list', handler: 'list-skills', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/skills/{skillId}', handler: 'get-skill', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/skills/s/{owner}/{slug}', handler: 'get-skill-by-slug', auth: 'optional', callers: 'role' },
    // Raw SKILL.md: public for public skills, the owner's bearer token for private ones (SPEC 4.5, part 6).
    { method: 'GET', path: '/skills/{skillId}/SKILL.md', handler: 'get-skill-raw', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/skills/s/{owner}/{slug}/SKILL.md', handler: 'get-skill-raw-by-slug', auth: 'optional', callers: 'role' },
  ],
  tables: [
    // Skills; `byOwner` lists an owner's, the sparse `publicSkills` index the public ones.
    {
      name: 'skills',
      partitionKey: 'skillId',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
        { name: 'publicSkills', partitionKey: 'publicListing', sortKey: 'createdAt' },
      ],
    },
    // `{ownerId}#{skillName}` -> skillId: skill names are unique per owner.
    { name: 'skill-names', partitionKey: 'nameKey' },
    // One counter per owner, for the per-owner limit (core/db/owner-count.ts).
    { name: 'skill-counts', partitionKey: 'ownerId' },
  ],
  provides: {
    skills: providePort({ tables: ['skills', 'skill-names', 'skill-counts'] }, ({ db, clock }) => createSkillStore(db, clock)),
  },
  uses: ['users', 'searchIndex'],
  runtimeFiles: YAML_PARSER_FILES,
});
