import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serve, type ServeProcess } from '../helpers/cli-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

// Nodes of a cluster on one PostgreSQL, as separate `serve` processes with their own data
// directories: a node that does not see the files the first node wrote refuses to start.

let postgres: TestPostgres;
let database: string;
let shared: string;
const running: ServeProcess[] = [];
const dirs: string[] = [];

async function dir(prefix: string): Promise<string> {
  const made = await tempDir(prefix);
  dirs.push(made);
  return made;
}

const nodeArgs = async (files?: string) => ['--data', await dir('sa-node-'), '--database', database, ...(files ? ['--files', files] : []), '--browsers', '1'];

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  shared = await dir('sa-shared-files-');
}, 60_000);

afterAll(async () => {
  for (const node of running) {
    node.child.kill('SIGTERM');
    await node.exited;
  }
  await postgres?.stop();
  for (const made of dirs) await fs.rm(made, { recursive: true, force: true });
}, 60_000);

describe('a cluster node proving it shares the files location', () => {
  it('starts a second node on the same files directory, and refuses one with a directory of its own with one line naming --files', async () => {
    running.push(await serve(await nodeArgs(shared), 60_000));
    const second = await serve(await nodeArgs(shared), 60_000);
    running.push(second);
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);

    for (const files of [await dir('sa-own-files-'), undefined]) {
      const args = await nodeArgs(files);
      // The reason it exited (serve rejects with the exit code and stderr), or null when it started.
      const refusal = await serve(args, 60_000).then(
        (started) => {
          running.push(started);
          return null;
        },
        (err: Error) => err.message,
      );
      expect(refusal).toMatch(/^serve exited with 1:/);
      const errors = refusal!.split('\n').filter((line) => line.startsWith('error:'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/does not share the cluster's files: .* set --files DIR .* every node/);
      // Its own location holds no marker left behind.
      const own = files ?? args[1];
      expect((await fs.readdir(own)).filter((name) => name.startsWith('.cluster-files-'))).toEqual([]);
    }
    // The shared directory holds the first node's marker alone.
    expect((await fs.readdir(shared)).filter((name) => name.startsWith('.cluster-files-'))).toHaveLength(1);
  }, 180_000);
});
