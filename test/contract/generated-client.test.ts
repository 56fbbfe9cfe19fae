import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';

// A client generated from the served document with openapi-typescript's default options and
// used through openapi-fetch, as a user of the API would: it must compile with only `url` in
// the body (defaults in the schema must not make fields required) and work against the server.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './v1-api.js';

const client = createClient<paths>({ baseUrl: process.env.BASE_URL, headers: { 'X-API-Key': process.env.API_KEY ?? '' } });

const created = await client.POST('/screenshot', { body: { url: process.env.PAGE_URL ?? '' } });
if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
const jobId: string = created.data.job_id;
const status = await client.GET('/screenshot/{job_id}', { params: { path: { job_id: jobId }, query: { include_source: '0' } } });
const usage = await client.GET('/usage');
console.log(JSON.stringify({ jobId, status: status.data?.status, calls: usage.data?.calls_today }));
`;

let server: TestServer;
let fixtures: FixtureServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  fixtures = await startFixtureServer();
  dir = await tempDir('sa-client-');
  // The generated client resolves openapi-fetch and the TypeScript compiler from the project.
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
});
afterAll(async () => {
  await fixtures?.close();
  await server?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('a client generated from GET /v1/openapi.json', () => {
  it('compiles with only url in the body and creates, reads and counts a job', async () => {
    const document = await (await fetch(`${server.url}/v1/openapi.json`)).json();
    await fs.writeFile(path.join(dir, 'v1-api.d.ts'), astToString(await openapiTS(document)));
    await fs.writeFile(path.join(dir, 'client.ts'), CLIENT);
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '--strict', '--target', 'es2022', '--module', 'nodenext', '--skipLibCheck', '--types', 'node', 'client.ts'], {
      cwd: dir,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err), failed: true }));
    expect(compiled.stdout).toBe('');

    const { key } = await server.account();
    const { stdout } = await run(process.execPath, ['client.js'], {
      cwd: dir,
      env: { ...process.env, BASE_URL: `${server.url}/v1`, API_KEY: key, PAGE_URL: `${fixtures.url}/small.html` },
    });
    const result = JSON.parse(stdout);
    expect(result.jobId).toMatch(/^job_[0-9a-f]{24}$/);
    expect(['pending', 'processing', 'completed']).toContain(result.status);
    expect(result.calls).toBe(1);
  });
});
