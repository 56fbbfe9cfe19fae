import { afterEach, describe, expect, it } from 'vitest';

import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';

// Ranges given with --egress-allow belong to that start of the service: saving settings in
// the panel must neither make them permanent nor drop them while the service runs.

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const start = async (dataDir: string, egressAllow: string[]) => {
  const server = await startTestServer({ dataDir, egressAllow });
  servers.push(server);
  return server;
};

/** Whether the live egress guard lets the service reach 127.0.0.1. */
const reachesLoopback = (server: TestServer) =>
  server.srv.services.egress.checkUrl('http://127.0.0.1:9/').then(
    () => true,
    () => false,
  );

describe('egress ranges from the command line', () => {
  it('are shown apart from the saved ones and are not saved with other settings', async () => {
    const dataDir = await tempDir();
    const first = await start(dataDir, ['127.0.0.1/32']);
    const before = await first.admin('GET', '/settings');
    expect(before.body).toMatchObject({ egress_allow: [], egress_allow_command_line: ['127.0.0.1'] });
    expect((await first.admin('PUT', '/settings', { retention_days: 9 })).status).toBe(200);
    await first.srv.close();
    servers.splice(0);

    const second = await start(dataDir, []);
    const after = await second.admin('GET', '/settings');
    expect(after.body).toMatchObject({ retention_days: 9, egress_allow: [], egress_allow_command_line: [] });
    expect(await reachesLoopback(second)).toBe(false);
  });

  it('stay allowed when the saved ranges are emptied', async () => {
    const server = await start(await tempDir(), ['127.0.0.1/32']);
    expect((await server.admin('PUT', '/settings', { egress_allow: ['10.9.0.0/16'] })).status).toBe(200);
    expect((await server.admin('PUT', '/settings', { egress_allow: [] })).body).toMatchObject({
      egress_allow: [],
      egress_allow_command_line: ['127.0.0.1'],
    });
    expect(await reachesLoopback(server)).toBe(true);
  });

  it('may be sent back unchanged, and are refused with 400 when changed', async () => {
    const server = await start(await tempDir(), ['127.0.0.1/32']);
    const read = await server.admin('GET', '/settings');
    expect((await server.admin('PUT', '/settings', read.body)).status).toBe(200);
    const changed = await server.admin('PUT', '/settings', { egress_allow_command_line: [] });
    expect(changed.status).toBe(400);
    expect(changed.body.message).toMatch(/egress_allow_command_line .*--egress-allow/);
    expect(await reachesLoopback(server)).toBe(true);
  });

  it('are no longer read back from a file an earlier version saved them in', async () => {
    const dataDir = await tempDir();
    const first = await start(dataDir, ['127.0.0.1/32']);
    // What earlier versions stored: the command line's range merged into the saved ones.
    await first.srv.services.stores.settings.save({ egress_allow: ['127.0.0.1', '10.9.0.0/16'] });
    await first.srv.close();
    servers.splice(0);

    const second = await start(dataDir, ['127.0.0.1/32']);
    expect((await second.admin('GET', '/settings')).body).toMatchObject({ egress_allow: ['10.9.0.0/16'], egress_allow_command_line: ['127.0.0.1'] });
  });
});
