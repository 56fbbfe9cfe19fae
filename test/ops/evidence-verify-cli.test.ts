// `screenshot-appliance verify FILE` from the build, offline: a bundle signed with a data
// directory's key, the same bundle with one byte of its archive changed, and a bundle checked
// against a directory that holds another key. Needs `npx tsc -p tsconfig.json` first.
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { packEvidence, WARC_PATH } from '../../server/capture/outputs/wacz-bundle.js';
import { EvidenceKey } from '../../server/crypto/evidence-key.js';
import { runCli } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

let dir: string;
let dataDir: string;
let otherDataDir: string;
let bundleFile: string;
let changedFile: string;

beforeAll(async () => {
  dir = await tempDir();
  dataDir = path.join(dir, 'data');
  otherDataDir = path.join(dir, 'other');
  await fs.mkdir(dataDir);
  await fs.mkdir(otherDataDir);
  EvidenceKey.forDataDir(otherDataDir);
  const bundle = await packEvidence(
    {
      url: 'http://site.test/',
      finalUrl: 'http://site.test/',
      title: 'Terms',
      capturedAt: Date.UTC(2026, 10, 28, 12),
      exchanges: [],
      picture: { data: Buffer.alloc(4096, 7), contentType: 'image/png' },
      html: '<p>Terms</p>',
      text: 'Terms',
      metadata: {},
      software: 'screenshot-appliance test',
    },
    EvidenceKey.forDataDir(dataDir),
  );
  bundleFile = path.join(dir, 'bundle.wacz');
  await fs.writeFile(bundleFile, bundle);
  // The archive is the first file, stored as it is: a byte past its local header is one of its own.
  const changed = Buffer.from(bundle);
  expect(changed.toString('latin1', 30, 30 + WARC_PATH.length)).toBe(WARC_PATH);
  changed[30 + WARC_PATH.length + changed.readUInt16LE(28) + 200] ^= 0x01;
  changedFile = path.join(dir, 'changed.wacz');
  await fs.writeFile(changedFile, changed);
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('verify FILE', () => {
  it('exits 0 for a bundle signed with the key of --data, saying it is this appliance\'s', async () => {
    const res = await runCli(['verify', bundleFile, '--data', dataDir]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ valid: true, signed_by_this_appliance: true, created_at: '2026-11-28T12:00:00.000Z', url: 'http://site.test/', problems: [] });
  });

  it('exits 1 for the bundle with one byte changed, naming the file whose digest broke', async () => {
    const res = await runCli(['verify', changedFile, '--data', dataDir]);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toMatchObject({ valid: false, signed_by_this_appliance: false, problems: [`${WARC_PATH}: its digest or size is not the one datapackage.json lists`] });
  });

  it('says a bundle is not this appliance\'s when --data holds another key, or --public-key names one', async () => {
    const other = await runCli(['verify', bundleFile, '--data', otherDataDir]);
    expect(other.code).toBe(0);
    expect(JSON.parse(other.stdout)).toMatchObject({ valid: true, signed_by_this_appliance: false });
    const named = await runCli(['verify', bundleFile, '--public-key', EvidenceKey.publicKeyIn(otherDataDir)!]);
    expect(JSON.parse(named.stdout)).toMatchObject({ valid: true, signed_by_this_appliance: false });
  });

  it('exits 2 for a file it cannot read', async () => {
    const res = await runCli(['verify', path.join(dir, 'missing.wacz')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/cannot read .*missing\.wacz: ENOENT/);
  });
});
