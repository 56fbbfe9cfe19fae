import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { backupDataDir, restoreDataDir } from '../server/cli/backup.js';

/**
 * `restore` of a large archive against `tar xzf` of the same archive, both run here, in the
 * same process, one after the other: the archive is a data directory holding one file of
 * RESTORE_BENCH_MB megabytes (default 256) of random bytes, which gzip cannot shrink.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/restore.js
 */
const MB = Number(process.env.RESTORE_BENCH_MB ?? 256);
const ROUNDS = Number(process.env.RESTORE_BENCH_ROUNDS ?? 3);

async function main(): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-restore-bench-'));
  try {
    const data = path.join(work, 'data');
    await fs.mkdir(path.join(data, 'files'), { recursive: true });
    await fs.writeFile(path.join(data, 'jobs.db'), '');
    const big = await fs.open(path.join(data, 'files', 'big.bin'), 'w');
    for (let i = 0; i < MB; i++) await big.write(crypto.randomBytes(1024 * 1024));
    await big.close();
    const archive = path.join(work, 'data.tar.gz');
    await backupDataDir(data, archive);
    const archiveMb = (await fs.stat(archive)).size / 1024 / 1024;

    const restoreS: number[] = [];
    const tarS: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const target = path.join(work, `restored-${round}`);
      let started = performance.now();
      await restoreDataDir(archive, target);
      restoreS.push((performance.now() - started) / 1000);
      await fs.rm(target, { recursive: true });

      const plain = path.join(work, `tar-${round}`);
      await fs.mkdir(plain);
      started = performance.now();
      execFileSync('tar', ['xzf', archive, '-C', plain]);
      tarS.push((performance.now() - started) / 1000);
      await fs.rm(plain, { recursive: true });
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const r = median(restoreS);
    const t = median(tarS);
    console.log(`archive: ${MB} MB of data, ${archiveMb.toFixed(0)} MB compressed; ${ROUNDS} rounds, medians`);
    console.log(`restore:  ${r.toFixed(2)} s  (${restoreS.map((s) => s.toFixed(2)).join(', ')})`);
    console.log(`tar xzf:  ${t.toFixed(2)} s  (${tarS.map((s) => s.toFixed(2)).join(', ')})`);
    console.log(`ratio restore / tar xzf: ${(r / t).toFixed(2)}`);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

await main();
