import type { ComponentChildren } from 'preact';

/** The page title (focused after navigation so screen readers announce the new page) and its main actions. */
export function PageHeader({ title, children, intro }: { title: string; children?: ComponentChildren; intro?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1 tabIndex={-1}>{title}</h1>
        {intro && <p class="page-intro">{intro}</p>}
      </div>
      {children && <div class="page-actions">{children}</div>}
    </header>
  );
}
