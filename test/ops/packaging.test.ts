import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const root = path.resolve('.');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

describe('the Dockerfile', () => {
  const steps = instructions(read('Dockerfile'));
  const stages = steps.filter((s) => s.op === 'FROM');
  const final = steps.slice(steps.lastIndexOf(stages.at(-1)!));

  it('builds on node:20-bookworm-slim and installs Chromium and the fonts from Debian', () => {
    expect(stages.every((s) => s.args.startsWith('node:20-bookworm-slim'))).toBe(true);
    const install = final.find((s) => s.op === 'RUN' && s.args.includes('apt-get install'))!.args;
    for (const pkg of ['chromium', 'fonts-noto-core', 'fonts-noto-cjk', 'fonts-noto-color-emoji', 'fonts-liberation']) {
      expect(install.split(/\s+/), pkg).toContain(pkg);
    }
  });

  it('runs as a user other than root, so Chromium keeps its sandbox', () => {
    const user = final.filter((s) => s.op === 'USER').at(-1)!.args;
    expect(user.split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(steps.some((s) => s.args.includes('--no-sandbox'))).toBe(false);
  });

  it('keeps the data in a volume the server uses, and checks /healthz', () => {
    const volume = final.find((s) => s.op === 'VOLUME')!.args;
    const env = final.filter((s) => s.op === 'ENV').map((s) => s.args).join(' ');
    const dataDir = /SCREENSHOT_DATA_DIR=(\S+)/.exec(env)![1];
    expect(volume).toContain(dataDir);
    expect(final.find((s) => s.op === 'HEALTHCHECK')!.args).toContain('/healthz');
  });

  it('starts a command the CLI has', () => {
    const entry = JSON.parse(final.find((s) => s.op === 'ENTRYPOINT')!.args) as string[];
    const cmd = JSON.parse(final.find((s) => s.op === 'CMD')!.args) as string[];
    expect(entry.slice(-1)[0]).toBe('/opt/screenshot-appliance/dist/server/cli.js');
    const res = spawnSync(process.execPath, ['dist/server/cli.js', ...cmd, '--help'], { encoding: 'utf8' });
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: screenshot-appliance serve/);
  });

  it('leaves the local build, the data and the modules out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const name of ['node_modules', 'dist', 'data', '.git']) expect(ignored).toContain(name);
  });
});

describe('compose.yaml', () => {
  const compose = yaml.load(read('compose.yaml')) as { services: Record<string, any>; volumes: Record<string, unknown> };
  const service = Object.values(compose.services)[0];

  it('builds the image and keeps the data directory in a named volume', () => {
    expect(service.build).toBe('.');
    const [volume, target] = String(service.volumes[0]).split(':');
    expect(Object.keys(compose.volumes)).toContain(volume);
    expect(target).toBe('/var/lib/screenshot-appliance');
  });

  it('runs as the image user, without capabilities or new privileges, on a read-only root', () => {
    expect(String(service.user).split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(service.cap_drop).toEqual(['ALL']);
    expect(service.security_opt).toContain('no-new-privileges:true');
    expect(service.read_only).toBe(true);
    expect(service.healthcheck.test.join(' ')).toContain('/healthz');
  });
});

describe('the systemd unit', () => {
  const unit = read('packaging/screenshot-appliance.service');
  const settings = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) settings.set(m[1], [...(settings.get(m[1]) ?? []), m[2]]);
  }
  const one = (key: string) => settings.get(key)?.at(-1);

  it('runs as a dedicated user with its state directory as the data directory', () => {
    expect(one('User')).toBe('screenshot-appliance');
    expect(one('StateDirectory')).toBe('screenshot-appliance');
    expect(one('StateDirectoryMode')).toBe('0700');
    expect(settings.get('Environment')).toContain('SCREENSHOT_DATA_DIR=%S/screenshot-appliance');
    expect(read('packaging/screenshot-appliance.sysusers')).toMatch(/^u screenshot-appliance /m);
  });

  it('is hardened', () => {
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['RestrictSUIDSGID', 'yes'],
    ]) {
      expect(one(key), key).toBe(value);
    }
    expect(one('ExecStart')).toMatch(/ serve$/);
  });

  it('passes systemd-analyze verify without a warning', (ctx) => {
    if (spawnSync('systemd-analyze', ['--version']).status !== 0) return ctx.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-unit-'));
    const file = path.join(dir, 'screenshot-appliance.service');
    fs.writeFileSync(file, unit);
    const res = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(res.status).toBe(0);
    // Unknown keys are only warnings to systemd; here they fail.
    expect(res.stderr.trim()).toBe('');
  });

  it('names an executable that exists here', () => {
    const node = one('ExecStart')!.split(' ')[0];
    expect(execFileSync(node, ['--version'], { encoding: 'utf8' })).toMatch(/^v\d+/);
  });
});
