import fs from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { jobRecord, waitingJob } from './conformance-records.js';

describe('a data directory from before job secrets were kept apart', () => {
  it('moves the sealed secrets of waiting jobs out of jobs.db on open, and leaves no line of jobs.db holding one', async () => {
    const dir = await tempDir('sa-legacy-secrets-');
    const waiting = { ...waitingJob(), sealed_secrets: 'v1.waiting-legacy-sealed' };
    const ended = { ...jobRecord(), sealed_secrets: null };
    // As earlier versions wrote it: the waiting line of the ended job still held its secrets.
    const lines = [{ ...ended, status: 'pending', sealed_secrets: 'v1.ended-legacy-sealed' }, ended, waiting];
    await fs.writeFile(path.join(dir, 'jobs.db'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const stores = await openNedbStores(dir, silentLogger);
    try {
      expect(await stores.jobSecrets.get(waiting._id)).toBe('v1.waiting-legacy-sealed');
      expect(await stores.jobSecrets.get(ended._id)).toBeNull();
      expect(await stores.jobs.get(waiting._id)).toMatchObject({ has_secrets: true });
      expect(await stores.jobs.get(waiting._id)).not.toHaveProperty('sealed_secrets');
      const file = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
      expect(file).not.toContain('legacy-sealed');
      expect(file).not.toContain('sealed_secrets');
    } finally {
      await stores.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
