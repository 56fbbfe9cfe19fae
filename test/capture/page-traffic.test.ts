import { describe, expect, it } from 'vitest';

import { MainFrame } from '../../server/capture/pipeline/main-frame.js';
import type { PageDriver } from '../../server/capture/pipeline/page-driver.js';
import { PageTraffic } from '../../server/capture/pipeline/page-traffic.js';
import { EGRESS_DENIED_HEADER } from '../../server/egress/proxy-markers.js';

// PageTraffic over a driver that replays CDP events in a chosen order (the seam): Chromium sends
// a response's raw headers (responseReceivedExtraInfo) before or after the request's end.

function replayingDriver() {
  const handlers = new Map<string, Set<(params: unknown) => void>>();
  const driver = {
    send: async () => ({}),
    on: (event: string, handler: (params: unknown) => void) => void (handlers.get(event) ?? handlers.set(event, new Set()).get(event)!).add(handler),
    off: (event: string, handler: (params: unknown) => void) => void handlers.get(event)?.delete(handler),
  } as unknown as PageDriver;
  const emit = (event: string, params: unknown) => {
    for (const handler of handlers.get(event) ?? []) handler(params);
  };
  return { driver, emit };
}

/** A script's cross-origin fetch the egress proxy refuses: the page learns only that it failed. */
function refusedFetch(emit: (event: string, params: unknown) => void, requestId: string, extraInfoLast: boolean) {
  const url = `http://127.0.0.2:9/from-script?${requestId}`;
  emit('Network.requestWillBeSent', { requestId, frameId: 'main', type: 'Fetch', documentURL: 'http://127.0.0.1/', initiator: { type: 'script' }, request: { url } });
  const extraInfo = () => emit('Network.responseReceivedExtraInfo', { requestId, headers: { [EGRESS_DENIED_HEADER]: 'a loopback address' }, statusCode: 403 });
  if (!extraInfoLast) extraInfo();
  emit('Network.loadingFailed', { requestId, errorText: 'net::ERR_FAILED' });
  if (extraInfoLast) extraInfo();
}

describe('PageTraffic', () => {
  it("counts a refusal whose raw headers come after the request's end, once, as one that comes before", () => {
    const { driver, emit } = replayingDriver();
    const traffic = new PageTraffic(driver, new MainFrame(driver));
    refusedFetch(emit, 'r1', false);
    refusedFetch(emit, 'r2', true);
    expect(traffic.blockedRequests).toBe(2);
    // The same event again (a redirect's, a repeat) is not a second refusal.
    emit('Network.responseReceivedExtraInfo', { requestId: 'r2', headers: { [EGRESS_DENIED_HEADER]: 'a loopback address' }, statusCode: 403 });
    expect(traffic.blockedRequests).toBe(2);
    traffic.dispose();
  });
});
