import fs from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { MONITOR_SECRETS_DIR } from '../../server/store/nedb/monitor-secret-files.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { monitorRecord } from './conformance-records.js';

// As earlier versions wrote it, with `sealed_secrets` in the record.
const monitor = (id: string, fields: Record<string, unknown>) => ({ ...monitorRecord({ _id: id, secret_fields: ['cookies'] }), ...fields });

describe('a data directory from before monitor secrets were kept apart', () => {
  it('moves them out of monitors.db on open, leaving no line of it holding one, and removes files no monitor names', async () => {
    const dir = await tempDir('sa-legacy-monitor-secrets-');
    // As earlier versions wrote it: every version of a record held the secrets of its time.
    const lines = [
      monitor('mon_a', { sealed_secrets: 'v1.first-legacy-sealed' }),
      monitor('mon_a', { sealed_secrets: 'v1.second-legacy-sealed', name: 'patched' }),
      monitor('mon_b', { sealed_secrets: null, secret_fields: [] }),
    ];
    await fs.writeFile(path.join(dir, 'monitors.db'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    await fs.mkdir(path.join(dir, MONITOR_SECRETS_DIR));
    await fs.writeFile(path.join(dir, MONITOR_SECRETS_DIR, 'mon_gone'), 'v1.orphan-sealed');
    const stores = await openNedbStores(dir, silentLogger);
    try {
      expect(await stores.monitors.secrets('mon_a')).toBe('v1.second-legacy-sealed');
      expect(await stores.monitors.secrets('mon_b')).toBeNull();
      expect(await stores.monitors.get('mon_a')).toMatchObject({ name: 'patched', secret_fields: ['cookies'] });
      expect(await stores.monitors.get('mon_a')).not.toHaveProperty('sealed_secrets');
      const file = await fs.readFile(path.join(dir, 'monitors.db'), 'utf8');
      expect(file).not.toContain('legacy-sealed');
      expect(file).not.toContain('sealed_secrets');
      expect(await fs.readdir(path.join(dir, MONITOR_SECRETS_DIR))).toEqual(['mon_a']);
    } finally {
      await stores.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
