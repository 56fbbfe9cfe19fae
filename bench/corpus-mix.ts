import { PRESETS } from '../server/capture/presets.js';
import { corpusList } from '../test/helpers/corpus.js';
import type { Scenario } from './scenarios.js';

/**
 * The real-page mix: pages of the corpus (scripts/corpus.json, Debian's documentation packages
 * served from the cache scripts/corpus.mjs fills), as clients send them: documentation in
 * Sphinx, MkDocs (a search index built in a Web Worker at load) and mdBook, a right-to-left
 * page, web fonts, a full page of moderate height and one on a phone. Pages far taller than
 * the service's full-page cap are left out: a plain full-page screenshot would take them whole.
 */
const CORPUS_SCENARIOS: Array<{ id: string; device: keyof typeof PRESETS; fullPage: boolean }> = [
  { id: 'python-index', device: 'desktop', fullPage: false },
  { id: 'mkdocs-index', device: 'desktop', fullPage: false },
  { id: 'typer-index', device: 'desktop', fullPage: false },
  { id: 'handbook-ar', device: 'desktop', fullPage: false },
  { id: 'django-index', device: 'desktop', fullPage: true },
  { id: 'rust-book-oo', device: 'mobile', fullPage: false },
];

/** The real-page mix's scenarios, their paths those of the corpus server. */
export function corpusMix(): Scenario[] {
  const pages = new Map(corpusList().pages.map((p) => [p.id, p]));
  return CORPUS_SCENARIOS.map(({ id, device, fullPage }) => {
    const page = pages.get(id);
    if (!page) throw new Error(`bench/corpus-mix.ts names ${id}, which scripts/corpus.json does not list`);
    return { name: id, path: page.path, preset: PRESETS[device], fullPage };
  });
}
