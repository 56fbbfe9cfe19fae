import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

import type { AdminJob } from '../admin-types.js';
import { apiText } from '../api-client.js';

type Completed = Extract<AdminJob, { status: 'completed' }>;
type Metadata = NonNullable<Completed['metadata']>;

/** What a job extracted (`extract`): its metadata as a table, its Markdown rendered on demand. */
export function ExtractedOutputs({ job }: { job: Completed }) {
  if (!job.metadata && job.has_markdown === undefined) return null;
  return (
    <section class="sub-section extracted" aria-label="Extracted">
      <h3>Extracted</h3>
      {job.metadata && <MetadataTable metadata={job.metadata} />}
      {job.has_markdown && !job.expired && <MarkdownView jobId={job.job_id} />}
    </section>
  );
}

function MetadataTable({ metadata }: { metadata: Metadata }) {
  const rows: Array<[string, string]> = [
    ['Title', metadata.title],
    ['Description', metadata.description],
    ['Language', metadata.language],
    ['Canonical URL', metadata.canonical_url],
    ...Object.entries(metadata.open_graph).map(([k, v]): [string, string] => [`og:${k}`, v]),
    ...Object.entries(metadata.twitter).map(([k, v]): [string, string] => [`twitter:${k}`, v]),
    ['Favicon', metadata.favicon],
    ...metadata.icons.map((i): [string, string] => [`Icon (${i.rel}${i.sizes ? ` ${i.sizes}` : ''})`, i.url]),
    ...metadata.feeds.map((f): [string, string] => [`Feed (${f.type})`, f.title ? `${f.title}: ${f.url}` : f.url]),
    ['Published', metadata.published_time],
    ['Modified', metadata.modified_time],
  ];
  return (
    <table class="table compact metadata" aria-label="Page metadata">
      <tbody>
        {rows
          .filter(([, value]) => value !== '')
          .map(([name, value]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td class="break">{value}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function MarkdownView({ jobId }: { jobId: string }) {
  const [state, setState] = useState<{ text?: string; error?: string; busy?: boolean }>({});
  const load = async () => {
    setState({ busy: true });
    try {
      setState({ text: await apiText(`/admin/api/jobs/${encodeURIComponent(jobId)}/markdown`) });
    } catch (err) {
      setState({ error: err instanceof Error ? err.message : String(err) });
    }
  };
  if (state.text !== undefined) {
    return (
      <div class="markdown" aria-label="Page content as Markdown">
        {renderMarkdown(state.text)}
      </div>
    );
  }
  return (
    <>
      <button type="button" class="button" disabled={state.busy} onClick={load}>
        {state.busy ? 'Loading…' : 'View Markdown'}
      </button>
      {state.error && (
        <p class="form-error" role="alert">
          {state.error}
        </p>
      )}
    </>
  );
}

/**
 * A small, safe subset of Markdown as elements: headings, fenced code, pipe tables, list items
 * and paragraphs; inline marks are shown as they are written. Every piece of the page's text
 * goes in as text (escaped by Preact), never as HTML.
 */
export function renderMarkdown(markdown: string): ComponentChildren[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: ComponentChildren[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^(```+|~~~+)/.exec(line);
    if (fence) {
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith(fence[1]); i++) code.push(lines[i]);
      i++;
      out.push(
        <pre class="source">
          <code>{code.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const Tag = `h${Math.min(6, heading[1].length + 3)}` as 'h4';
      out.push(<Tag>{heading[2]}</Tag>);
      i++;
      continue;
    }
    if (line.startsWith('|')) {
      const rows: string[][] = [];
      for (; i < lines.length && lines[i].startsWith('|'); i++) {
        const cells = lines[i].replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
        if (!cells.every((c) => /^:?-+:?$/.test(c))) rows.push(cells);
      }
      const [head, ...body] = rows;
      out.push(
        <table class="table compact">
          <thead>
            <tr>{head.map((c) => <th>{c}</th>)}</tr>
          </thead>
          <tbody>
            {body.map((r) => (
              <tr>{r.map((c) => <td>{c}</td>)}</tr>
            ))}
          </tbody>
        </table>,
      );
      continue;
    }
    if (/^\s*([-*+]|\d+\.)\s+/.test(line)) {
      const items: string[] = [];
      for (; i < lines.length && /^\s*([-*+]|\d+\.)\s+/.test(lines[i]); i++) items.push(lines[i].replace(/^\s*([-*+]|\d+\.)\s+/, ''));
      out.push(
        <ul>
          {items.map((t) => (
            <li>{t}</li>
          ))}
        </ul>,
      );
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const para: string[] = [];
    for (; i < lines.length && lines[i].trim() !== '' && !/^(#{1,6}\s|```|~~~|\|)/.test(lines[i]); i++) para.push(lines[i]);
    out.push(<p>{para.join(' ')}</p>);
  }
  return out;
}
