import fs from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

// Every relative link of README.md and docs/*.md points at a file that exists, and every #anchor
// at a heading of its target, by GitHub's rules for heading ids.

const root = path.resolve('.');

/** GitHub's id for a heading: lowercase, punctuation dropped (but - and _), spaces to -. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text outside fenced code blocks, with inline code spans kept as their content only where asked. */
function withoutFences(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      lines.push('');
    } else if (marker) {
      fence = marker;
      lines.push('');
    } else {
      lines.push(line);
    }
  }
  return lines;
}

/** The ids of a document's headings, numbered as GitHub numbers repeated ones (-1, -2…). */
function anchors(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const text = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (text === undefined) continue;
    const plain = text.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = slug(plain);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** The link targets of a document (links and images), outside code blocks and code spans. */
function links(markdown: string): Array<{ line: number; target: string }> {
  const found: Array<{ line: number; target: string }> = [];
  withoutFences(markdown).forEach((text, index) => {
    const prose = text.replace(/(`+)[\s\S]*?\1/g, '');
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      found.push({ line: index + 1, target: match[1] });
    }
  });
  return found;
}

/** What is wrong with the relative links of `file` (a path from the root), one line each. */
function brokenLinks(file: string, read: (file: string) => string | undefined): string[] {
  const text = read(file);
  if (text === undefined) return [`${file}: missing`];
  const problems: string[] = [];
  for (const { line, target } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = pathPart
      ? path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(pathPart)))
      : file;
    const content = read(resolved);
    if (content === undefined) {
      problems.push(`${file}:${line}: ${target}: no file ${resolved}`);
      continue;
    }
    if (anchor !== undefined && !anchors(content).has(decodeURIComponent(anchor))) {
      problems.push(`${file}:${line}: ${target}: no heading #${anchor} in ${resolved}`);
    }
  }
  return problems;
}

/** Reads a file of the repository: its text, '' for a directory, undefined when it does not exist. */
function readRepo(file: string): string | undefined {
  const full = path.join(root, file);
  if (!full.startsWith(root) || !fs.existsSync(full)) return undefined;
  return fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
}

const documents = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('links between the documents', () => {
  it.each(documents)('%s: every relative link reaches a file and heading that exist', (file) => {
    expect(brokenLinks(file, readRepo)).toEqual([]);
  });

  it('README.md links every page of docs/', () => {
    const readme = links(readRepo('README.md')!).map((l) => l.target.split('#')[0]);
    expect(documents.filter((d) => d.startsWith('docs/') && !readme.includes(d))).toEqual([]);
  });
});

describe('the checker', () => {
  it('makes ids as GitHub does', () => {
    const ids = anchors(
      [
        '# Screenshot Appliance',
        '### POST /v1/screenshot — create a job (201)',
        '## GET /v1/screenshot/{job_id} — status and result (200)',
        '#### Outputs from the same render: `extract`',
        '## API contract (OpenAPI)',
        '## Errors',
        '```sh',
        '# a comment, not a heading',
        '```',
        '## Errors',
      ].join('\n'),
    );
    expect([...ids]).toEqual([
      'screenshot-appliance',
      'post-v1screenshot--create-a-job-201',
      'get-v1screenshotjob_id--status-and-result-200',
      'outputs-from-the-same-render-extract',
      'api-contract-openapi',
      'errors',
      'errors-1',
    ]);
  });

  it('reports a missing file, a missing heading, and passes what exists', () => {
    const files: Record<string, string> = {
      'README.md': [
        'See [the API](docs/api.md#errors), [limits](docs/api.md#limits), [gone](docs/gone.md),',
        '[here](#read-on), [there](#nowhere), [a site](https://example.com/#x) and `[code](docs/none.md)`.',
        '```md',
        '[in a block](docs/none.md)',
        '```',
        '## Read on',
      ].join('\n'),
      'docs/api.md': '# The v1 API\n\n## Errors\n',
    };
    expect(brokenLinks('README.md', (f) => files[f])).toEqual([
      'README.md:1: docs/api.md#limits: no heading #limits in docs/api.md',
      'README.md:1: docs/gone.md: no file docs/gone.md',
      'README.md:2: #nowhere: no heading #nowhere in README.md',
    ]);
  });
});
