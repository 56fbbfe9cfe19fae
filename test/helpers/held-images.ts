import http from 'node:http';
import type { AddressInfo } from 'node:net';

// 1×1 PNG
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

/** Images on 127.0.0.1 that arrive only once the test says so. */
export interface HeldImages {
  /** e.g. "http://127.0.0.1:41234"; every path under it is one image. */
  url: string;
  /** Answers the requests held so far and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

/**
 * Serves a 1×1 PNG at any path, holding every request until `release`: a page showing one of
 * these does not fire `load`, so its capture goes on, until the test lets it end.
 */
export async function startHeldImages(): Promise<HeldImages> {
  const held = new Set<http.ServerResponse>();
  let released = false;
  const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PIXEL);
  const server = http.createServer((_req, res) => {
    if (released) return answer(res);
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release() {
      released = true;
      for (const res of held) answer(res);
      held.clear();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
