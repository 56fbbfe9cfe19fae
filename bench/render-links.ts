import { quantile } from './stats.js';

/** Calls the admin API of the service under test. */
type Admin = (method: string, route: string, body?: unknown) => Promise<unknown>;

export interface RenderLinkFigures {
  /** Latency of a render link that captures on every load (cache_ttl=0), ms. */
  uncachedP50: number;
  /** Latency of a render link served from the result cache, ms. */
  hitP50: number;
  hitP95: number;
  /** uncachedP50 / hitP50. */
  speedup: number;
  hits: number;
}

/** The per-second limit is 10 requests an account: loads are spaced to stay under it. */
const SPACING_MS = 120;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Loads `url` and reads the whole answer; returns the milliseconds it took, or throws on anything but 200. */
async function load(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(url);
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`render link answered ${res.status}: ${Buffer.from(body).toString('utf8').slice(0, 200)}`);
  return performance.now() - started;
}

/**
 * A render link as a dashboard uses it: the same signed link loaded again and again. Measures a
 * link that captures on every load against one served from the result cache after its first
 * load, one load at a time, through the service's HTTP front as a browser would fetch an <img>.
 */
export async function measureRenderLinks(options: { admin: Admin; pageUrl: string; uncached: number; hits: number }): Promise<RenderLinkFigures> {
  const account = (await options.admin('POST', '/accounts', { email: `render-bench-${Date.now()}@example.test`, email_verified: true, daily_limit: 100_000 })) as {
    id: string;
  };
  const key = (await options.admin('POST', `/accounts/${account.id}/keys`, { name: 'render bench' })) as { id: string };
  const link = async (cacheTtl: number) =>
    ((await options.admin('POST', `/keys/${key.id}/render-link`, { url: options.pageUrl, cache_ttl: cacheTtl })) as { render_url: string }).render_url;

  const uncachedLink = await link(0);
  const uncached: number[] = [];
  for (let i = 0; i < options.uncached; i++) {
    uncached.push(await load(uncachedLink));
    await pause(SPACING_MS);
  }

  const cachedLink = await link(3600);
  await load(cachedLink);
  const hits: number[] = [];
  for (let i = 0; i < options.hits; i++) {
    await pause(SPACING_MS);
    hits.push(await load(cachedLink));
  }
  const uncachedP50 = quantile(uncached, 0.5);
  const hitP50 = quantile(hits, 0.5);
  return { uncachedP50, hitP50, hitP95: quantile(hits, 0.95), speedup: hitP50 > 0 ? uncachedP50 / hitP50 : 0, hits: hits.length };
}
