import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A page: its title as the one `h1` (focused on navigation, so screen readers announce the new
 * page and keyboard users start at its top), actions beside it, then its content.
 */
export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren; lead?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Agent Platform`;
    heading.current?.focus({ preventScroll: true });
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.actions === undefined ? null : <div class="page-actions">{props.actions}</div>}
      </header>
      {props.lead === undefined ? null : <p class="lead">{props.lead}</p>}
      {props.children}
    </section>
  );
}

/** A titled part of a page (`h2`). */
export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren; id?: string }) {
  const id = props.id ?? `section-${props.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="section" aria-labelledby={id}>
      <div class="section-head">
        <h2 id={id}>{props.title}</h2>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

/** Tabs as links (each tab its own URL, so back and forward work). */
export function Tabs(props: { label: string; tabs: readonly { href: string; label: string; current: boolean }[] }) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map((tab) => (
        <a href={tab.href} aria-current={tab.current ? 'page' : undefined} key={tab.href}>
          {tab.label}
        </a>
      ))}
    </nav>
  );
}
