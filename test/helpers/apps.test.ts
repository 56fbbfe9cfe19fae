import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { appMissing, startApp, viewWikiPage, wikiCacheWrittenAt } from './apps.js';
import { forFile } from './for-file.js';

const missing = appMissing('dokuwiki');

describe.skipIf(missing !== null)('startApp: the wiki', () => {
  const wiki = forFile(() => startApp('dokuwiki'), (app) => app.stop());

  // Two views at once of a page the wiki renders again were served it without its body: the
  // apps corpus's reference and the service's capture view the page together.
  it('is started with its page cached and indexed: no later view renders it again', async () => {
    const data = path.join(wiki.dir, 'data');
    const cached = wikiCacheWrittenAt(data);
    for (let view = 0; view < 3; view++) {
      await viewWikiPage(wiki.url, 'wiki:syntax');
      // The taskrunner answers before it works: give its indexer the time it takes (~0.1 s).
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(wikiCacheWrittenAt(data)).toBe(cached);
  }, 60_000);
});
