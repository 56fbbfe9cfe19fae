import { describe, expect, it } from 'vitest';

import { renderRequestBody } from '../../server/api/render-link.js';
import { parseScreenshotParams } from '../../server/api/screenshot-params.js';
import type { Settings } from '../../server/contract/admin.js';
import type { SecretBox } from '../../server/crypto/secret-box.js';
import type { MonitorChecks } from '../../server/monitors/monitor-checks.js';
import { MonitorService } from '../../server/monitors/monitor-service.js';
import { SettingsService } from '../../server/settings.js';
import type { MonitorStore, SettingsStore } from '../../server/store/stores.js';
import { checkEndpoint } from '../../server/uploads/destination-rules.js';

// Every entry point that takes an address from a customer or the admin goes through one check
// (contract/http-url.ts): the same spelling gets the same answer at each of them.

/** What an entry point answered: the address it keeps (without a trailing slash), or why it refused, its field named FIELD. */
type Answer = { kept: string } | { refused: string };

async function answer(field: string, take: () => unknown): Promise<Answer> {
  try {
    return { kept: String(await take()).replace(/\/+$/, '') };
  } catch (err) {
    if (!(err instanceof Error) || (err as { field?: string }).field !== field) throw err;
    return { refused: err.message.split(';')[0].replace(field, 'FIELD') };
  }
}

const monitors = new MonitorService({
  store: { insert: async () => true } as unknown as MonitorStore,
  checks: {} as MonitorChecks,
  secrets: { seal: (value: unknown) => JSON.stringify(value) } as unknown as SecretBox,
  parseCapture: (body) => parseScreenshotParams(body),
  minMinutes: () => 1,
  maxPerAccount: () => 10,
  clock: { now: () => Date.parse('2026-01-01T00:00:00Z') },
});
const owner = { account_id: 'acc_1', key_id: 'key_1' };
const schedule = { every_minutes: 60 };

const settingsStore: SettingsStore = { load: async () => null, save: async () => undefined };
const settings = new SettingsService(settingsStore, { egress_allow_command_line: [] } as unknown as Settings);

/** Each entry point, by what it is: a function of the address, and the field a refusal names. */
const ENTRY_POINTS: Array<[string, string, (address: string) => unknown]> = [
  ['POST /v1/screenshot url (and MCP tools, the admin\'s checks)', 'url', (a) => parseScreenshotParams({ url: a }).url],
  ['POST /v1/screenshot base_url', 'base_url', (a) => parseScreenshotParams({ html: '<p>hi</p>', base_url: a }).secrets?.html?.baseUrl],
  ['POST /v1/screenshot callback_url', 'callback_url', (a) => parseScreenshotParams({ url: 'https://a.test/', callback_url: a }).callback_url],
  ['a render link url', 'url', (a) => parseScreenshotParams(renderRequestBody([['url', a]]).body).url],
  // A monitor keeps its request as given and each check reads it again: its address is the checks'.
  ['POST /v1/monitors url, as its checks capture it', 'url', async (a) => parseScreenshotParams((await monitors.create(owner, { url: a, schedule }, 'http://x.test')).request).url],
  ['POST /v1/monitors callback_url', 'callback_url', async (a) => (await monitors.create(owner, { url: 'https://a.test/', schedule, callback_url: a }, 'http://x.test')).callback_url],
  ['a storage destination endpoint', 'endpoint', (a) => checkEndpoint(a)],
  ['the settings\' public_base_url', 'public_base_url', async (a) => (await settings.update({ public_base_url: a })).public_base_url],
];

/** Spellings, and the answer each must get everywhere. */
const SPELLINGS: Array<[string, Answer]> = [
  ['HTTPS://Example.COM/path', { kept: 'https://example.com/path' }],
  ['  https://example.com/a b  ', { kept: 'https://example.com/a%20b' }],
  ['https://bücher.example/', { kept: 'https://xn--bcher-kva.example' }],
  ['https://user:pw@example.com/', { refused: 'FIELD may not contain a user name or password (user:password@)' }],
  ['https://@example.com/', { refused: 'FIELD may not contain a user name or password (user:password@)' }],
  ['https:\\\\user@example.com/', { refused: 'FIELD may not contain a user name or password (user:password@)' }],
  ['ftp://example.com/', { refused: 'FIELD must use the scheme http:// or https://' }],
  ['javascript:alert(1)', { refused: 'FIELD must use the scheme http:// or https://' }],
  ['example.com', { refused: 'FIELD is not a valid URL' }],
  ['https://exa mple.com/', { refused: 'FIELD is not a valid URL' }],
];

describe('one check of a given address', () => {
  for (const [spelling, expected] of SPELLINGS) {
    it(`answers ${JSON.stringify(spelling)} the same at every entry point`, async () => {
      const answers = await Promise.all(ENTRY_POINTS.map(async ([name, field, take]) => [name, await answer(field, () => take(spelling))] as const));
      expect(Object.fromEntries(answers)).toEqual(Object.fromEntries(ENTRY_POINTS.map(([name]) => [name, expected])));
    });
  }
});
