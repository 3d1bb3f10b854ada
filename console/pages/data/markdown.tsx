import type { ComponentChildren, JSX } from 'preact';

/**
 * A small Markdown renderer for SKILL.md previews: headings, paragraphs, lists, block quotes, code
 * (fenced and inline), emphasis and links. It builds elements (Preact nodes), never HTML text, so
 * markup in the document is shown as the characters it is; links keep only http(s), mailto and
 * relative addresses.
 */

export interface Frontmatter {
  /** `key: value` lines in order; a value spanning lines (a list, a block) is kept as its text. */
  readonly fields: readonly (readonly [string, string])[];
  readonly body: string;
  /** The frontmatter had no closing `---`. */
  readonly unclosed: boolean;
}

/** Splits YAML frontmatter (between `---` lines at the top) from the body, reading its top-level keys. */
export function splitFrontmatter(text: string): Frontmatter {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[0]?.trim() !== '---') return { fields: [], body: text, unclosed: false };
  const end = lines.findIndex((line, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (end < 0) return { fields: [], body: text, unclosed: true };
  const fields: [string, string][] = [];
  for (const line of lines.slice(1, end)) {
    const top = /^([A-Za-z0-9_-][^:]*):\s*(.*)$/.exec(line);
    if (top !== null && !/^\s/.test(line)) fields.push([top[1] ?? '', unquote((top[2] ?? '').trim())]);
    else if (fields.length > 0 && line.trim() !== '') {
      const lastField = fields[fields.length - 1]!;
      lastField[1] = `${lastField[1]}${lastField[1] === '' ? '' : '\n'}${line.trim()}`;
    }
  }
  return { fields, body: lines.slice(end + 1).join('\n'), unclosed: false };
}

function unquote(value: string): string {
  const quoted = /^(["'])(.*)\1$/.exec(value);
  return quoted === null ? value : (quoted[2] ?? '');
}

/** An address a preview may link to; anything else (javascript:, data:, ...) stays text. */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === undefined) return /^[\w#/.?-]/.test(trimmed) && !trimmed.startsWith('//') ? trimmed : null;
  return scheme === 'http' || scheme === 'https' || scheme === 'mailto' ? trimmed : null;
}

const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s](?:[^*]*?[^*\s])?)\*|(?<![\p{L}\p{N}])_([^_\s](?:[^_]*?[^_\s])?)_(?![\p{L}\p{N}])|\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|<(https?:\/\/[^\s>]+)>/gu;

/** Inline Markdown as nodes: code, strong, emphasis, links; everything else text. */
export function inline(text: string, keyPrefix = 'i'): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(INLINE)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const key = `${keyPrefix}-${n++}`;
    if (m[2] !== undefined) out.push(<code key={key}>{m[2]}</code>);
    else if (m[3] !== undefined || m[4] !== undefined) out.push(<strong key={key}>{inline(m[3] ?? m[4] ?? '', key)}</strong>);
    else if (m[5] !== undefined || m[6] !== undefined) out.push(<em key={key}>{inline(m[5] ?? m[6] ?? '', key)}</em>);
    else if (m[7] !== undefined) {
      const href = safeHref(m[8] ?? '');
      out.push(
        href === null ? (
          <span key={key}>{inline(m[7], key)}</span>
        ) : (
          <a key={key} href={href} rel="noopener noreferrer nofollow" target="_blank">
            {inline(m[7], key)}
          </a>
        ),
      );
    } else if (m[9] !== undefined)
      out.push(
        <a key={key} href={m[9]} rel="noopener noreferrer nofollow" target="_blank">
          {m[9]}
        </a>,
      );
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

type Heading = 'h3' | 'h4' | 'h5' | 'h6';

/**
 * Markdown blocks as nodes. Headings start at `h3` (`#` is h3): the preview sits under the page's
 * own h1 and its section's h2, so the document's outline stays in order.
 */
export function markdownBlocks(text: string): JSX.Element[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: JSX.Element[] = [];
  let i = 0;
  const key = () => `b${blocks.length}`;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence !== null) {
      const marker = fence[1] ?? '```';
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trim().startsWith(marker)) code.push(lines[i++] ?? '');
      i++;
      blocks.push(
        <pre key={key()} class="md-code" tabIndex={0}>
          <code data-language={fence[2] || undefined}>{code.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      const level = Math.min(6, (heading[1]?.length ?? 1) + 2);
      const Tag = `h${level}` as Heading;
      blocks.push(<Tag key={key()}>{inline(heading[2] ?? '', key())}</Tag>);
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      blocks.push(<hr key={key()} />);
      i++;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i] ?? '')) quoted.push((lines[i++] ?? '').replace(/^\s{0,3}>\s?/, ''));
      blocks.push(<blockquote key={key()}>{markdownBlocks(quoted.join('\n'))}</blockquote>);
      continue;
    }
    const item = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+/;
    const first = item.exec(line);
    if (first !== null) {
      const ordered = /\d/.test(first[1] ?? '');
      const items: string[][] = [];
      while (i < lines.length) {
        const current = lines[i] ?? '';
        const match = item.exec(current);
        if (match !== null && /\d/.test(match[1] ?? '') === ordered) items.push([current.slice(match[0].length)]);
        else if (current.trim() !== '' && /^\s+/.test(current) && items.length > 0) items[items.length - 1]!.push(current.trim());
        else break;
        i++;
      }
      const start = ordered ? Number.parseInt(first[1] ?? '1', 10) : undefined;
      const children = items.map((parts, n) => <li key={n}>{inline(parts.join(' '), `${key()}-${n}`)}</li>);
      blocks.push(
        ordered ? (
          <ol key={key()} start={start === 1 ? undefined : start}>
            {children}
          </ol>
        ) : (
          <ul key={key()}>{children}</ul>
        ),
      );
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length) {
      const current = lines[i] ?? '';
      if (current.trim() === '' || /^\s{0,3}(#{1,6}\s|```|~~~|>|[-*+]\s|\d{1,9}[.)]\s)/.test(current)) break;
      paragraph.push(current.trim());
      i++;
    }
    if (paragraph.length === 0) {
      // A line no rule took (never expected): shown as text so nothing is lost.
      paragraph.push(line);
      i++;
    }
    blocks.push(<p key={key()}>{inline(paragraph.join(' '), key())}</p>);
  }
  return blocks;
}

/** A SKILL.md as a reader sees it: the frontmatter as a table, then the body rendered. */
export function SkillPreview(props: { skillMd: string; label?: string }) {
  const { fields, body, unclosed } = splitFrontmatter(props.skillMd);
  return (
    <div class="md-preview" role="region" aria-label={props.label ?? 'Preview'} tabIndex={0}>
      {unclosed ? <p class="muted">The frontmatter has no closing “---” line.</p> : null}
      {fields.length === 0 ? null : (
        <table class="frontmatter">
          <caption>Frontmatter</caption>
          <tbody>
            {fields.map(([name, value], n) => (
              <tr key={`${name}-${n}`}>
                <th scope="row">{name}</th>
                <td>{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="md-body">{markdownBlocks(body)}</div>
    </div>
  );
}
