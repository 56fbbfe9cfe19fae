import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { adminOpenApiDocument } from '../../server/api/openapi/admin-document.js';
import { v1OpenApiDocument } from '../../server/api/openapi/v1-document.js';
import { tempDir } from '../helpers/temp-dir.js';

// Both documents pass a third-party linter (Redocly's recommended rules) with no error and no
// warning, but for those listed with their reason in redocly-lint-ignore.yaml.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string | undefined;

afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('the OpenAPI documents', () => {
  it('lint clean with redocly', async () => {
    dir = await tempDir('sa-lint-');
    await fs.writeFile(path.join(dir, 'v1.json'), JSON.stringify(v1OpenApiDocument('http://127.0.0.1:8080'), null, 2));
    await fs.writeFile(path.join(dir, 'admin.json'), JSON.stringify(adminOpenApiDocument('http://127.0.0.1:8080'), null, 2));
    await fs.copyFile(path.join(ROOT, 'test/contract/redocly-lint-ignore.yaml'), path.join(dir, '.redocly.lint-ignore.yaml'));
    const redocly = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
    const answer = await run(process.execPath, [redocly, 'lint', '--format', 'stylish', 'v1.json', 'admin.json'], {
      cwd: dir,
      // No telemetry and no update check: the linter runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: `${err.stderr ?? ''}\n(exit non-zero)` }));
    const report = `${answer.stdout}\n${answer.stderr}`;
    expect(report).not.toMatch(/\b(error|warning)s?\b.*\b(rule|generated)\b|\(exit non-zero\)|You have \d+ (error|warning)/i);
    expect(report).toMatch(/v1\.json/);
  });
});
