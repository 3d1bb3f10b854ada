import type { ComponentChildren } from 'preact';

/** A word's stem as search finds it (`forecasting` → `forecast`), so hits of other forms are marked too. */
function stem(term: string): string {
  const lower = term.toLowerCase();
  for (const suffix of ['ingly', 'edly', 'ing', 'ies', 'ied', 'ed', 'es', 'ly', 's', 'y']) {
    if (lower.length - suffix.length >= 3 && lower.endsWith(suffix)) return lower.slice(0, -suffix.length);
  }
  return lower;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The words of a query, as a pattern matching any word that starts with one of their stems. */
export function hitPattern(query: string): RegExp | null {
  const stems = [
    ...new Set(
      query
        .split(/[^\p{L}\p{N}_]+/u)
        .filter((t) => t.length >= 2)
        .map(stem),
    ),
  ];
  if (stems.length === 0) return null;
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${stems.map(escapeRegExp).join('|')})[\\p{L}\\p{N}_]*`, 'giu');
}

/**
 * Text with the query's words marked (`<mark>`): built as text nodes and elements, so whatever the
 * text holds (markup, scripts) is shown as text and never parsed.
 */
export function Highlight(props: { text: string; query: string }): ComponentChildren {
  const pattern = hitPattern(props.query);
  if (pattern === null) return props.text;
  const parts: ComponentChildren[] = [];
  let last = 0;
  for (const match of props.text.matchAll(pattern)) {
    const at = match.index ?? 0;
    if (at > last) parts.push(props.text.slice(last, at));
    parts.push(<mark key={at}>{match[0]}</mark>);
    last = at + match[0].length;
  }
  if (last < props.text.length) parts.push(props.text.slice(last));
  return <>{parts}</>;
}
