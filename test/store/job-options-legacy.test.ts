import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { RECORD_OPTIONS_BYTES } from '../../server/store/records/job-options.js';
import { tempDir } from '../helpers/temp-dir.js';
import { jobRecord, waitingJob } from './conformance-records.js';

// jobs.db as earlier versions wrote it, every option of a job in its record, opened as a start
// opens it (with a history period), on real NeDB files.

const DAY = 86_400_000;
let dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  dirs = [];
});

const styles = `body { color: red } /* ${'s'.repeat(60_000)} */`;
const hideSelectors = Array.from({ length: 100 }, (_, i) => `.absent-${i}-${'h'.repeat(1000)}`);

describe('jobs of an earlier version holding their large options', () => {
  it('lose them when they have ended, naming them, and keep them while they wait', async () => {
    const dir = await tempDir('sa-legacy-options-');
    dirs.push(dir);
    const created_at = Date.now() - DAY;
    const options = { delayMs: 100, hideSelectors, styles };
    const ended = jobRecord({ _id: 'job_ended', created_at, options, secret_names: { headers: ['X-Token'], cookies: [], http_auth: false } });
    const waiting = waitingJob({ _id: 'job_waiting', created_at, options });
    await fs.writeFile(path.join(dir, 'jobs.db'), `${JSON.stringify(ended)}\n${JSON.stringify(waiting)}\n`);

    const stores = await openNedbStores(dir, silentLogger, { historyCutoff: async () => Date.now() - 90 * DAY });
    const loaded = await stores.jobs.get('job_ended');
    expect(loaded?.options).toEqual({ delayMs: 100 });
    expect(loaded?.secret_names).toEqual({ headers: ['X-Token'], cookies: [], http_auth: false, options: ['hide_selectors', 'styles'] });
    expect(JSON.stringify(loaded).length).toBeLessThan(2 * RECORD_OPTIONS_BYTES);
    // A job still to run needs them: its run reads them from its record.
    expect((await stores.jobs.get('job_waiting'))?.options).toEqual(options);

    // The next compaction writes the file from what is held: the ended job's options are gone from it too.
    await stores.compact();
    await stores.close();
    const file = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
    expect(file.split('\n').filter((line) => line.includes('s'.repeat(1000)))).toHaveLength(1);
  });
});
