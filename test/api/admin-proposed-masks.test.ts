import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testServerForFile } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from '../monitors/changing-page.js';

// The control panel's Accept and Reject of the masks proposed from a monitor's first baseline:
// real captures of a page on loopback with a live clock, two captures seconds apart.

const server = testServerForFile({ ratePerSecond: 1000 });
let page: ChangingPage;
let accountId = '';

beforeAll(async () => {
  page = await startChangingPage();
  ({ accountId } = await server.account());
});
afterAll(() => page?.close());

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A monitor of the page with a clock whose first check has taken place and masks have been proposed. */
async function monitorWithProposedMasks(): Promise<{ id: string; proposed_masks: Rect[] }> {
  const created = await server.admin('POST', '/monitors', { account_id: accountId, url: page.url, schedule: { every_minutes: 600 }, propose_masks: true });
  expect(created.status).toBe(201);
  expect((await server.admin('POST', `/monitors/${created.body.id}/run`)).status).toBe(201);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const shown = (await server.admin('GET', '/monitors')).body.monitors.find((m: { id: string }) => m.id === created.body.id);
    if (shown.proposed_masks.length > 0) return shown;
    if (Date.now() > deadline) throw new Error(`no mask proposed for ${created.body.id}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the masks proposed from a first baseline, in the admin API', () => {
  let accepted: { id: string; proposed_masks: Rect[] };
  let rejected: { id: string; proposed_masks: Rect[] };

  beforeAll(async () => {
    [accepted, rejected] = await Promise.all([monitorWithProposedMasks(), monitorWithProposedMasks()]);
  }, 60_000);

  it('become rectangle masks of the monitor when accepted', async () => {
    const answer = await server.admin('POST', `/monitors/${accepted.id}/proposed-masks/accept`);
    expect(answer).toMatchObject({ status: 200, body: { id: accepted.id, proposed_masks: [], mask_rects: accepted.proposed_masks } });
  });

  it('are dropped when rejected, the monitor keeping no rectangle mask', async () => {
    const answer = await server.admin('POST', `/monitors/${rejected.id}/proposed-masks/reject`);
    expect(answer).toMatchObject({ status: 200, body: { id: rejected.id, proposed_masks: [], mask_rects: [] } });
  });

  it('answer 404 for a monitor that does not exist', async () => {
    for (const decision of ['accept', 'reject']) {
      const answer = await server.admin('POST', `/monitors/mon_000000000000000000000000/proposed-masks/${decision}`);
      expect(answer).toMatchObject({ status: 404, body: { error: 'Not found' } });
    }
  });
});
