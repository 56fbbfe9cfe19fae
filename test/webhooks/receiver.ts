import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
  at: number;
}

/** What the receiver answers: a status (with headers), or `hang` to never answer. */
export type Reply = number | { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Replies for the next requests, in order; after they run out every request gets `fallback`. */
  replies: Reply[];
  fallback: Reply;
  /** Resolves once `count` requests have arrived (rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that records what it gets and answers as told. */
export async function startReceiver(replies: Reply[] = [], options: { port?: number; fallback?: Reply } = {}): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const hung = new Set<http.ServerResponse>();
  const waiters: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    replies: [...replies],
    fallback: options.fallback ?? 200,
    waitFor: (count, ms = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (received.length >= count) return resolve();
        const timer = setTimeout(() => reject(new Error(`expected ${count} webhook(s), got ${received.length}`)), ms);
        const check = () => {
          if (received.length >= count) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        waiters.push(check);
      }),
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body, path: req.url ?? '', at: Date.now() });
      for (const wake of waiters.splice(0)) wake();
      const reply = receiver.replies.length > 0 ? (receiver.replies.shift() as Reply) : receiver.fallback;
      if (reply === 'hang') return void hung.add(res);
      const { status, headers } = typeof reply === 'number' ? { status: reply, headers: {} } : reply;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
