import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from '../helpers/cli-process.js';
import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { readZip } from '../helpers/zip-entries.js';

// `capture --from`: the built CLI as a process against a real server with a scripted engine.

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
  ({ key } = await server.account());
});
afterAll(async () => {
  await server?.close();
});

describe('capture --from', () => {
  it('captures every URL of the file as one batch and saves its archive, printing its path', async () => {
    const dir = await tempDir();
    const list = path.join(dir, 'urls.txt');
    await fs.writeFile(list, '# the handbook\nhttp://127.0.0.1:9/a\n\nhttp://127.0.0.1:9/b\nhttp://127.0.0.1:9/c\n');
    const res = await runCli(['capture', '--from', list, '--devices', 'desktop,mobile', '--out', dir, '--server', server.url, '--key', key]);
    expect(res.code, res.stderr).toBe(0);
    const file = res.stdout.trim();
    expect(file).toMatch(/batch_[0-9a-f]{24}\.zip$/);
    const entries = await readZip(await fs.readFile(file));
    expect([...entries.keys()].filter((name) => name.endsWith('.png'))).toHaveLength(6);
    expect(res.stderr).toMatch(/: 6\/6 ended, 0 failed, completed$/m);
  });

  it('captures the pages of a sitemap with --sitemap', async () => {
    const site = http.createServer((_req, res) => {
      res.end(`<urlset><url><loc>http://127.0.0.1:9/s1</loc></url><url><loc>http://127.0.0.1:9/s2</loc></url></urlset>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const dir = await tempDir();
      const sitemap = `http://127.0.0.1:${(site.address() as AddressInfo).port}/sitemap.xml`;
      const res = await runCli(['capture', '--sitemap', sitemap, '--out', dir, '--server', server.url, '--key', key]);
      expect(res.code, res.stderr).toBe(0);
      const manifest = JSON.parse((await readZip(await fs.readFile(res.stdout.trim()))).get('manifest.json')!.toString());
      expect(manifest.items.map((i: { url: string }) => i.url)).toEqual(['http://127.0.0.1:9/s1', 'http://127.0.0.1:9/s2']);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });
});
