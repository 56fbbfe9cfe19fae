import type { ComponentChildren } from 'preact';

/** What an empty list looks like: what is missing and what to do about it. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty-state">
      <h3>{title}</h3>
      {children}
    </div>
  );
}
