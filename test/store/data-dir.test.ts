import fs from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, tempDir, waitForJob } from '../helpers/test-server.js';

// accounts.db holds webhook secrets and keys.db key hashes: no other user of the machine may
// read them, whatever the umask the service was started with.

let fixtures: FixtureServer;
let umask: number;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  umask = process.umask(0o022);
});
afterAll(async () => {
  process.umask(umask);
  await fixtures?.close();
});

const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Every file and folder under `dir` whose mode lets another user in. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (mode(file) & 0o077) found.push(`${path.relative(dir, file)} ${mode(file).toString(8)}`);
  }
  return found;
}

describe('the data directory', () => {
  it('is created 0700 with every file 0600 under umask 022, captures included', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const server = await startTestServer({ dataDir });
    try {
      const { key } = await server.account();
      const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
      expect((await waitForJob(server, key, created.job_id)).status).toBe('completed');
      expect(mode(dataDir)).toBe(0o700);
      expect(openToOthers(dataDir)).toEqual([]);
      expect(fs.readdirSync(path.join(dataDir, 'files')).length).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('is made private at start when an earlier version left it readable', async () => {
    const dataDir = await tempDir();
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'accounts.db'), '', { mode: 0o644 });
    fs.mkdirSync(path.join(dataDir, 'files'), { mode: 0o755 });
    const server = await startTestServer({ dataDir });
    try {
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(path.join(dataDir, 'accounts.db'))).toBe(0o600);
      expect(mode(path.join(dataDir, 'files'))).toBe(0o700);
    } finally {
      await server.close();
    }
  });
});
