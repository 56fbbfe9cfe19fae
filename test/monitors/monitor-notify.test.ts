import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';

import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { backupDataDir } from '../../server/cli/backup.js';
import { SECRET_KEY_FILE } from '../../server/store/data-dir.js';
import { filesHolding } from '../helpers/files-under.js';
import { startTestServer, tempDir, type TestServer, waitForJob } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

// A monitor's notifications to Slack and Teams incoming webhooks and by e-mail, received on loopback.

let server: TestServer;
let page: ChangingPage;
let receiver: http.Server;
let base: string;
const received: Array<{ path: string; contentType: string | undefined; body: Record<string, unknown> }> = [];
let smtp: SMTPServer;
let smtpPort: number;
const mails: Array<{ to: string[]; user: string | undefined; raw: string }> = [];

beforeAll(async () => {
  page = await startChangingPage();
  page.clock = false;
  server = await startTestServer({ ratePerSecond: 1000 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(body) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth: (auth, _session, callback) =>
      auth.username === 'monitors' && auth.password === 'smtp-secret' ? callback(null, { user: auth.username }) : callback(new Error('bad credentials')),
    onData: (stream, session, callback) => {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), user: session.user as string | undefined, raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => smtp?.close(() => resolve(undefined)));
  await page?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function check(key: string, monitorId: string): Promise<void> {
  const { job_id } = await (await server.v1('POST', `/monitors/${monitorId}/run`, key)).json();
  await waitForJob(server, key, job_id);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { checks } = await (await server.v1('GET', `/monitors/${monitorId}/checks`, key)).json();
    if (checks.find((c: { job_id: string; status: string }) => c.job_id === job_id && c.status !== 'pending')) return;
    if (Date.now() > deadline) throw new Error(`check ${job_id} still pending`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function until<T>(get: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('notifications of a monitor', () => {
  it('tells Slack and Teams of a price changed from 49 to 59, the text change first', async () => {
    const { key } = await server.account();
    const res = await server.v1('POST', '/monitors', key, {
      url: page.url,
      name: 'Shop',
      schedule: { every_minutes: 600 },
      threshold: 0,
      ...NO_PROPOSED_MASKS,
      notify: { slack_url: `${base}/slack/T01/B01/slack-token`, teams_url: `${base}/teams/webhookb2/teams-token` },
    });
    expect(res.status).toBe(201);
    const monitor = await res.json();
    // The tokens are in the paths: a monitor shows the origins alone.
    const shown = { email: [], slack_url: `${base}/…`, teams_url: `${base}/…` };
    expect(monitor.notify).toEqual(shown);
    // A change that leaves them out, or gives them back as shown, keeps them.
    const changed = await server.v1('PATCH', `/monitors/${monitor.id}`, key, { notify: { teams_url: shown.teams_url } });
    expect((await changed.json()).notify).toEqual(shown);
    expect((await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json()).notify).toEqual(shown);
    page.price = '49';
    await check(key, monitor.id);
    page.price = '59';
    await check(key, monitor.id);

    const slack = await until(() => received.find((r) => r.path === '/slack/T01/B01/slack-token'));
    expect(slack.contentType).toBe('application/json');
    expect(slack.body.text).toMatch(/^Shop changed\n\+ Price: 59 EUR\n- Price: 49 EUR\n/);
    expect(slack.body.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'Shop changed' } },
      { type: 'section', text: { type: 'mrkdwn', text: expect.stringMatching(/^```\+ Price: 59 EUR\n- Price: 49 EUR\n/) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: expect.stringContaining('|Diff>') }] },
    ]);

    const teams = await until(() => received.find((r) => r.path === '/teams/webhookb2/teams-token'));
    expect(teams.body).toMatchObject({ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive' }] });
    const card = (teams.body.attachments as Array<{ content: { type: string; version: string; body: Array<{ text: string }>; actions: Array<{ type: string; title: string }> } }>)[0].content;
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(card.body.map((b) => b.text).slice(0, 3)).toEqual(['Shop changed', '+ Price: 59 EUR', '- Price: 49 EUR']);
    expect(card.actions.map((a) => a.title)).toEqual(['Diff', 'Screenshot', 'Baseline']);
    // The first check compared nothing: one message each.
    expect(received.filter((r) => r.path.startsWith('/slack'))).toHaveLength(1);
  });

  it('keeps the Slack and Teams URLs in no file of the data directory, nor in a backup, in clear', async () => {
    const { key } = await server.account();
    const notify = { slack_url: `${base}/services/T02/B02/slack-secret-token`, teams_url: `${base}/webhookb2/teams-secret-token` };
    const { id } = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, paused: true, notify })).json();
    // Each change writes the record again.
    expect((await server.v1('PATCH', `/monitors/${id}`, key, { name: 'Shop', notify: { email: ['team@example.test'] } })).status).toBe(200);
    expect((await server.v1('PATCH', `/monitors/${id}`, key, { notify: { slack_url: `${base}/services/T02/B02/slack-secret-token-2` } })).status).toBe(200);
    for (const token of ['slack-secret-token', 'teams-secret-token']) expect(await filesHolding(server.dataDir, token)).toEqual([]);
    const archive = path.join(await tempDir(), 'data.tar.gz');
    await backupDataDir(server.dataDir, archive);
    const unpacked = zlib.gunzipSync(await fs.readFile(archive));
    expect(unpacked.includes('slack-secret-token')).toBe(false);
    expect(unpacked.includes('teams-secret-token')).toBe(false);
  });

  it("asks for the Slack URL again once the data directory's key changed, and takes it", async () => {
    const dataDir = path.join(await tempDir('sa-monitor-chat-key-'), 'data');
    const before = await startTestServer({ dataDir, ratePerSecond: 1000 });
    const { key } = await before.account();
    const slack_url = `${base}/slack/T04/B04/rekeyed-token`;
    const { id } = await (await before.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, paused: true, notify: { slack_url } })).json();
    await before.srv.close();
    await fs.writeFile(path.join(dataDir, SECRET_KEY_FILE), crypto.randomBytes(32), { mode: 0o600 });
    const after = await startTestServer({ dataDir, ratePerSecond: 1000 });
    try {
      expect((await after.v1('PATCH', `/monitors/${id}`, key, { name: 'renamed' })).status).toBe(200);
      const refused = await after.v1('PATCH', `/monitors/${id}`, key, { notify: { email: ['team@example.test'] } });
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toMatch(/^The monitor's notify\.slack_url could not be read: the data directory's job-secrets\.key changed .*give them again with this change$/);
      const given = await after.v1('PATCH', `/monitors/${id}`, key, { notify: { email: ['team@example.test'], slack_url } });
      expect((await given.json()).notify).toEqual({ email: ['team@example.test'], slack_url: `${base}/…`, teams_url: null });
    } finally {
      await after.close();
    }
  });

  it('refuses a Slack URL that is not an http(s) address', async () => {
    const { key } = await server.account();
    const res = await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, notify: { slack_url: 'ftp://example.test/x' } });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain('notify.slack_url');
  });

  it('mails the price change through the SMTP server of the settings, with the regions and the diff picture attached', async () => {
    const saved = await server.admin('PUT', '/settings', {
      smtp: { host: '127.0.0.1', port: smtpPort, secure: false, username: 'monitors', password: 'smtp-secret', from: 'monitors@example.test' },
    });
    expect(saved.status).toBe(200);
    const read = (await server.admin('GET', '/settings')).body.smtp;
    expect(read).toEqual({ host: '127.0.0.1', port: smtpPort, secure: false, username: 'monitors', from: 'monitors@example.test', has_password: true });
    expect(JSON.stringify((await server.admin('GET', '/settings')).body)).not.toContain('smtp-secret');
    // Stored sealed, never in clear.
    const stored = await fs.readFile(path.join(server.dataDir, 'settings.db'), 'utf8');
    expect(stored).toContain('smtp_password_sealed');
    expect(stored).not.toContain('smtp-secret');

    const { key } = await server.account();
    const monitor = await (
      await server.v1('POST', '/monitors', key, { url: page.url, name: 'Shop', schedule: { every_minutes: 600 }, threshold: 0, ...NO_PROPOSED_MASKS, notify: { email: ['team@example.test'] } })
    ).json();
    page.price = '49';
    await check(key, monitor.id);
    page.price = '59';
    await check(key, monitor.id);

    const mail = await until(() => mails[0]);
    expect(mail).toMatchObject({ to: ['team@example.test'], user: 'monitors' });
    expect(mail.raw).toContain('Subject: Changed: Shop');
    expect(mail.raw).toMatch(/\+ Price: 59 EUR\r?\n- Price: 49 EUR/);
    expect(mail.raw).toMatch(/Content-Type: image\/png; name=diff\.png/);
    expect(mail.raw).toMatch(/Content-Type: application\/json; name=regions\.json/);
    expect(mails).toHaveLength(1);
  });
});
