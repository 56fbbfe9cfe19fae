import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under the system temp dir; tests remove it themselves. */
export async function tempDir(prefix = 'sa-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}
