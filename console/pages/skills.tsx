import { useEffect, useMemo, useState } from 'preact/hooks';
import { dataOf, issuesOf, useLoad, useSubmit, type Api } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { href, navigate } from '../router.ts';
import { CodeEditor } from '../ui/code-editor.tsx';
import { Button, ConfirmButton, Form, Select, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, Empty, ErrorNote, Loading, Notice, When } from '../ui/status.tsx';
import { DataTable } from '../ui/table.tsx';
import { formatBytes } from './data/files.ts';
import { Highlight } from './data/highlight.tsx';
import { SkillPreview } from './data/markdown.tsx';

const TEMPLATE = `---
name: release-notes
description: Writes release notes from a list of merged changes
---
# Release notes

1. Group the changes by area.
2. Lead with what users will notice.
`;

type Visibility = 'public' | 'private';

export default function Skills(props: PageProps) {
  const id = props.route.segments[1];
  if (id === 'new') return <NewSkill />;
  if (id !== undefined) return <SkillDetail skillId={id} />;
  return <SkillList />;
}

/** One page of the signed-in user's own skills (`visibility=all` without an owner: only theirs). */
const loadSkills = (api: Api, cursor: string | undefined) =>
  dataOf(api.client.GET('/skills/list', { params: { query: { visibility: 'all', limit: 50, ...(cursor ? { cursor } : {}) } } }));

function SkillList() {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [pages, setPages] = useState<Awaited<ReturnType<typeof loadSkills>>[]>([]);
  const list = useLoad((api) => loadSkills(api, cursor), [cursor]);
  useEffect(() => {
    const page = list.data;
    if (page !== undefined) setPages((all) => (cursor === undefined ? [page] : [...all, page]));
  }, [list.data]);
  const skills = pages.flatMap((p) => p.skills);
  const next = list.data?.nextCursor ?? null;
  return (
    <Page
      title="Skills"
      lead="A skill is a SKILL.md document (YAML frontmatter with a name and a description, then Markdown) that agents can read by its address."
      actions={
        <a class="button button-primary" href={href('skills', 'new')}>
          New skill
        </a>
      }
    >
      <Section title="Your skills">
        <ErrorNote error={list.error} />
        {list.loading && skills.length === 0 ? <Loading what="skills" /> : null}
        <DataTable
          caption="Your skills"
          rows={list.loading && skills.length === 0 ? undefined : skills}
          rowKey={(s) => s.skillId}
          empty={
            <>
              No skills yet. <a href={href('skills', 'new')}>Write your first</a>.
            </>
          }
          columns={[
            { header: 'Name', cell: (s) => <a href={href('skills', s.skillId)}>{s.fullName}</a> },
            { header: 'Description', cell: (s) => s.description },
            { header: 'Visibility', cell: (s) => <Badge tone={s.visibility === 'public' ? 'ok' : 'neutral'}>{s.visibility}</Badge> },
            { header: 'Size', cell: (s) => formatBytes(s.sizeBytes), wide: true },
            { header: 'Updated', cell: (s) => <When at={s.updatedAt} />, wide: true },
          ]}
        />
        {next === null ? null : (
          <Button busy={list.loading} onClick={() => setCursor(next)}>
            More
          </Button>
        )}
      </Section>
      <Stars />
      <FindSkills />
    </Page>
  );
}

function Stars() {
  const stars = useLoad((api) => dataOf(api.client.GET('/stars', { params: { query: { limit: 50 } } })));
  return (
    <Section title="Your stars">
      <ErrorNote error={stars.error} />
      <DataTable
        caption="Your stars"
        rows={stars.data?.stars}
        rowKey={(s) => s.resourceId}
        empty="You have starred nothing yet."
        columns={[
          {
            header: 'Name',
            cell: (s) =>
              s.resourceType === 'skill' ? (
                <a href={href('skills', s.resourceId)}>{s.slug ?? s.name}</a>
              ) : (
                <a href={href(s.resourceType === 'agent' ? 'agents' : 'mcp', s.resourceId)}>{s.slug ?? s.name}</a>
              ),
          },
          { header: 'Kind', cell: (s) => s.resourceType },
          { header: 'Description', cell: (s) => s.description, wide: true },
          { header: 'Starred', cell: (s) => <When at={s.starredAt} />, wide: true },
        ]}
      />
    </Section>
  );
}

/** Public skills, by their words (`GET /search`), hits marked. */
function FindSkills() {
  const [query, setQuery] = useState('');
  const search = useSubmit((api) => dataOf(api.client.GET('/search', { params: { query: { q: query.trim(), type: 'skill', limit: 20 } } })));
  const result = search.result;
  return (
    <Section title="Find public skills">
      <Form label="Find public skills" class="form form-inline" onSubmit={() => search.run()}>
        <TextInput label="Words" type="search" required value={query} onValue={setQuery} placeholder="release notes" />
        <Button type="submit" variant="primary" busy={search.busy}>
          Search
        </Button>
      </Form>
      <ErrorNote error={search.error} />
      {result === undefined ? null : result.results.length === 0 ? (
        <Empty>No public skill matches “{result.query}”.</Empty>
      ) : (
        <ol class="hits" aria-label="Public skills found">
          {result.results.map((hit) => (
            <li class="hit" key={hit.resourceId}>
              <p class="hit-title">
                <a href={href('skills', hit.resourceId)}>
                  <Highlight text={hit.slug} query={result.query} />
                </a>{' '}
                <span class="muted">by {hit.owner}</span>
              </p>
              <p class="hit-chunk">
                <Highlight text={hit.description} query={result.query} />
              </p>
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}

/** The problems of a refused SKILL.md as the editor marks them: YAML's own line, counted in the document. */
function skillProblems(error: unknown): { line: number; message: string }[] {
  return issuesOf(error).flatMap((issue) => {
    const line = /\(frontmatter line (\d+)\)/.exec(issue)?.[1];
    return line === undefined ? [] : [{ line: Number(line) + 1, message: issue.replace(/^skillMd: /, '') }];
  });
}

function SkillEditor(props: {
  skillMd: string;
  onSkillMd: (text: string) => void;
  visibility: Visibility;
  onVisibility: (v: Visibility) => void;
  description: string;
  onDescription: (d: string) => void;
  error: unknown;
}) {
  const problems = useMemo(() => skillProblems(props.error), [props.error]);
  return (
    <div class="skill-edit">
      <div class="skill-edit-source">
        <CodeEditor
          label="SKILL.md"
          language="markdown"
          value={props.skillMd}
          onValue={props.onSkillMd}
          problems={problems}
          hint="Frontmatter keys: name, description, license, compatibility, metadata, allowed-tools."
        />
        <Select
          label="Visibility"
          value={props.visibility}
          onValue={(v) => props.onVisibility(v as Visibility)}
          options={[
            { value: 'public', label: 'Public: anyone can read it and find it in search' },
            { value: 'private', label: 'Private: only you' },
          ]}
        />
        <TextInput label="Description" hint="Optional: replaces the frontmatter's description." value={props.description} onValue={props.onDescription} />
      </div>
      <div class="skill-edit-preview">
        <h2 class="preview-title" id="preview-title">
          Preview
        </h2>
        <SkillPreview skillMd={props.skillMd} label="Preview of SKILL.md" />
      </div>
    </div>
  );
}

function NewSkill() {
  const [skillMd, setSkillMd] = useState(TEMPLATE);
  const [visibility, setVisibility] = useState<Visibility>('public');
  const [description, setDescription] = useState('');
  const create = useSubmit((api) =>
    dataOf(api.client.POST('/skills/create', { body: { skillMd, visibility, ...(description.trim() === '' ? {} : { description: description.trim() }) } })),
  );
  return (
    <Page title="New skill" actions={<a href={href('skills')}>All skills</a>}>
      <Form
        label="New skill"
        onSubmit={async () => {
          const created = await create.run();
          if (created) navigate('skills', created.skill.skillId);
        }}
        class="form form-wide"
      >
        <SkillEditor
          skillMd={skillMd}
          onSkillMd={setSkillMd}
          visibility={visibility}
          onVisibility={setVisibility}
          description={description}
          onDescription={setDescription}
          error={create.error}
        />
        <ErrorNote error={create.error} />
        <div>
          <Button type="submit" variant="primary" busy={create.busy}>
            Create skill
          </Button>
        </div>
      </Form>
    </Page>
  );
}

function SkillDetail(props: { skillId: string }) {
  const skill = useLoad((api) => dataOf(api.client.GET('/skills/{skillId}', { params: { path: { skillId: props.skillId } } })), [props.skillId]);
  const me = useLoad((api) => dataOf(api.client.GET('/user/info')));
  const [skillMd, setSkillMd] = useState('');
  const [visibility, setVisibility] = useState<Visibility>('public');
  const [description, setDescription] = useState('');
  useEffect(() => {
    if (skill.data === undefined) return;
    setSkillMd(skill.data.skillMd ?? '');
    setVisibility(skill.data.visibility);
    setDescription('');
  }, [skill.data]);
  const save = useSubmit((api) =>
    dataOf(
      api.client.PUT('/skills/update', {
        body: { skillId: props.skillId, skillMd, visibility, ...(description.trim() === '' ? {} : { description: description.trim() }) },
      }),
    ),
  );
  const remove = useSubmit((api) => dataOf(api.client.POST('/skills/delete', { body: { skillId: props.skillId } })));
  const data = skill.data;
  if (data === undefined)
    return (
      <Page title="Skill" actions={<a href={href('skills')}>All skills</a>}>
        {skill.loading ? <Loading what="the skill" /> : <ErrorNote error={skill.error} />}
      </Page>
    );
  const mine = me.data !== undefined && me.data.alias !== null && data.owner === me.data.alias;
  return (
    <Page title={data.fullName} actions={<a href={href('skills')}>All skills</a>} lead={data.description}>
      <p class="skill-facts">
        <Badge tone={data.visibility === 'public' ? 'ok' : 'neutral'}>{data.visibility}</Badge> {formatBytes(data.sizeBytes)} · updated{' '}
        <When at={data.updatedAt} /> ·{' '}
        <a href={data.rawUrl} target="_blank" rel="noopener noreferrer">
          Raw SKILL.md
        </a>
      </p>
      <StarButton resourceId={data.skillId} />
      {mine ? (
        <Section title="Edit">
          <Form
            label="Edit skill"
            class="form form-wide"
            onSubmit={async () => {
              if (await save.run()) skill.reload();
            }}
          >
            <SkillEditor
              skillMd={skillMd}
              onSkillMd={setSkillMd}
              visibility={visibility}
              onVisibility={setVisibility}
              description={description}
              onDescription={setDescription}
              error={save.error}
            />
            <ErrorNote error={save.error} />
            {save.result === undefined ? null : <Notice tone="success">{save.result.message}</Notice>}
            <div class="form-inline">
              <Button type="submit" variant="primary" busy={save.busy}>
                Save
              </Button>
              <ConfirmButton
                label="Delete skill"
                confirm={`Delete ${data.fullName}? Its name can then be used again.`}
                busy={remove.busy}
                onConfirm={async () => (await remove.run()) && navigate('skills')}
              />
            </div>
            <ErrorNote error={remove.error} />
          </Form>
        </Section>
      ) : (
        <Section title="SKILL.md">
          <SkillPreview skillMd={data.skillMd ?? ''} label="SKILL.md" />
        </Section>
      )}
    </Page>
  );
}

function StarButton(props: { resourceId: string }) {
  const [version, setVersion] = useState(0);
  const state = useLoad(
    async (api) => {
      const [check, count] = await Promise.all([
        dataOf(api.client.GET('/stars/check', { params: { query: { resourceId: props.resourceId } } })),
        dataOf(api.client.GET('/stars/count/{resourceId}', { params: { path: { resourceId: props.resourceId } } })),
      ]);
      return { starred: check.starred, count: count.count };
    },
    [props.resourceId, version],
  );
  const toggle = useSubmit(async (api, star: boolean) => {
    const body = { resourceId: props.resourceId, resourceType: 'skill' as const };
    return star ? dataOf(api.client.POST('/stars', { body })) : dataOf(api.client.DELETE('/stars', { body }));
  });
  const starred = state.data?.starred ?? false;
  return (
    <div class="star-row">
      <Button
        aria-pressed={starred}
        busy={toggle.busy || state.loading}
        onClick={async () => {
          if (await toggle.run(!starred)) setVersion((v) => v + 1);
        }}
      >
        <span aria-hidden="true">{starred ? '★' : '☆'}</span> {starred ? 'Starred' : 'Star'}
      </Button>
      <span class="muted" aria-live="polite">
        {state.data === undefined ? null : `${state.data.count} ${state.data.count === 1 ? 'star' : 'stars'}`}
      </span>
      <ErrorNote error={toggle.error ?? state.error} />
    </div>
  );
}
