import path from 'node:path';

import { backupDataDir, restoreDataDir } from '../../server/cli/backup.js';
import { startTestServer, tempDir } from '../helpers/test-server.js';

/**
 * A monitor created from `body` on a server of its own, whose data directory (named after
 * `prefix`) is then backed up, the server closed, and the backup restored elsewhere: the
 * restored directory, the account's key and the monitor as created.
 */
export async function restoredMonitor(prefix: string, body: Record<string, unknown>): Promise<{ target: string; key: string; monitor: any }> {
  const dataDir = path.join(await tempDir(prefix), 'data');
  const server = await startTestServer({ dataDir, ratePerSecond: 1000 });
  const { key } = await server.account();
  const monitor = await (await server.v1('POST', '/monitors', key, body)).json();
  const archive = path.join(await tempDir(), 'data.tar.gz');
  await backupDataDir(dataDir, archive);
  await server.close();
  const target = path.join(await tempDir(), 'restored');
  await restoreDataDir(archive, target);
  return { target, key, monitor };
}
