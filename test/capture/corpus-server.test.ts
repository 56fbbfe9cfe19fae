import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CorpusServer, startCorpusServer } from '../helpers/corpus.js';
import { tempDir } from '../helpers/temp-dir.js';

// The corpus server serves the unpacked packages as /usr/share/doc is served, and nothing
// outside them: a symlink or a path that leads out is not found.

describe('the corpus server', () => {
  let dir: string;
  let server: CorpusServer;
  const get = (p: string) => fetch(server.url + p, { signal: AbortSignal.timeout(5_000) });

  beforeAll(async () => {
    dir = await tempDir('sa-corpus-');
    const root = path.join(dir, 'root');
    await fs.mkdir(path.join(root, 'usr/share/doc/pkg/html'), { recursive: true });
    await fs.mkdir(path.join(root, 'usr/share/javascript/lib'), { recursive: true });
    await fs.writeFile(path.join(root, 'usr/share/doc/pkg/html/index.html'), '<p>index</p>');
    await fs.writeFile(path.join(root, 'usr/share/javascript/lib/lib.js'), 'lib()');
    await fs.writeFile(path.join(dir, 'secret.txt'), 'outside');
    await fs.symlink('../../../javascript/lib/lib.js', path.join(root, 'usr/share/doc/pkg/html/lib.js'));
    await fs.symlink(path.join(dir, 'secret.txt'), path.join(root, 'usr/share/doc/pkg/html/escape.txt'));
    server = await startCorpusServer(root);
  });

  afterAll(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves a directory by its index.html, as HTML', async () => {
    const res = await get('/usr/share/doc/pkg/html/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('<p>index</p>');
  });

  it('follows a symlink into another package of the tree', async () => {
    const res = await get('/usr/share/doc/pkg/html/lib.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await res.text()).toBe('lib()');
  });

  it.each(['/usr/share/doc/pkg/html/escape.txt', '/../secret.txt', '/%2e%2e/secret.txt', '/usr/share/doc/pkg/html/..%2f..%2f..%2f..%2f..%2fsecret.txt'])(
    'answers 404 for %s, which leads out of the tree',
    async (p) => {
      const res = await get(p);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('outside');
    },
  );
});
