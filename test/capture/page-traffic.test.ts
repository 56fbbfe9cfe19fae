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

type Emit = (event: string, params: unknown) => void;

/** Where a refused fetch's raw headers come among its events. */
type HeadersAt = 'first' | 'before-end' | 'after-end' | 'never';

/**
 * A script's cross-origin fetch the egress proxy refuses: the page learns only that it failed.
 * Returns the raw-headers event, to send later when `at` is 'never'.
 */
function refusedFetch(emit: Emit, requestId: string, at: HeadersAt): () => void {
  const url = `http://127.0.0.2:9/from-script?${requestId}`;
  const extraInfo = () => emit('Network.responseReceivedExtraInfo', { requestId, headers: { [EGRESS_DENIED_HEADER]: 'a loopback address' }, statusCode: 403 });
  if (at === 'first') extraInfo();
  emit('Network.requestWillBeSent', { requestId, frameId: 'main', type: 'Fetch', documentURL: 'http://127.0.0.1/', initiator: { type: 'script' }, request: { url } });
  if (at === 'before-end') extraInfo();
  emit('Network.loadingFailed', { requestId, errorText: 'net::ERR_FAILED' });
  if (at === 'after-end') extraInfo();
  return extraInfo;
}

describe('PageTraffic', () => {
  it("counts a refusal whose raw headers come after the request's end, once, as one that comes before", () => {
    const { driver, emit } = replayingDriver();
    const traffic = new PageTraffic(driver, new MainFrame(driver));
    refusedFetch(emit, 'r1', 'before-end');
    refusedFetch(emit, 'r2', 'after-end');
    expect(traffic.blockedRequests).toBe(2);
    // The same event again (a redirect's, a repeat) is not a second refusal.
    emit('Network.responseReceivedExtraInfo', { requestId: 'r2', headers: { [EGRESS_DENIED_HEADER]: 'a loopback address' }, statusCode: 403 });
    expect(traffic.blockedRequests).toBe(2);
    traffic.dispose();
  });

  it('counts a refusal whose raw headers come before the request is announced', () => {
    const { driver, emit } = replayingDriver();
    const traffic = new PageTraffic(driver, new MainFrame(driver));
    refusedFetch(emit, 'r1', 'first');
    expect(traffic.blockedRequests).toBe(1);
    traffic.dispose();
  });

  it('waits at the end of a capture for the raw headers of a fetch that failed without them, up to a bound', async () => {
    const { driver, emit } = replayingDriver();
    const traffic = new PageTraffic(driver, new MainFrame(driver));
    refusedFetch(emit, 'r1', 'before-end');
    const late = refusedFetch(emit, 'r2', 'never');
    const timer = setTimeout(late, 150);
    await traffic.lateRefusals(5_000);
    clearTimeout(timer);
    expect(traffic.blockedRequests).toBe(2);
    // A failure whose headers never come does not hold the capture past the bound.
    refusedFetch(emit, 'r3', 'never');
    const began = Date.now();
    await traffic.lateRefusals(200);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(traffic.blockedRequests).toBe(2);
    traffic.dispose();
  });
});
