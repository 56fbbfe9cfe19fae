import http from 'node:http';
import type { AddressInfo } from 'node:net';

import Koa from 'koa';
import { describe, expect, it } from 'vitest';

import { LoggedPaths } from '../../server/api/access-log.js';
import { errorMiddleware } from '../../server/api/error-middleware.js';
import { type FileRouteDeps, fileRoutes } from '../../server/api/file-routes.js';

describe('the error middleware', () => {
  it('logs a 500 on an image address without the image name, which is its capability', async () => {
    const lines: string[] = [];
    const app = new Koa();
    app.silent = true;
    // The service's image routes (their handlers never run here: the failure comes first).
    app.use(errorMiddleware((msg) => lines.push(msg), new LoggedPaths([fileRoutes({} as FileRouteDeps)])));
    app.use(() => {
      throw new Error('the disk went away');
    });
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const name = 'Q0W3aBcDeFgHiJkLmNoPqRsT.png';
      const answer = await fetch(`http://127.0.0.1:${port}/v1/files/${name}`);
      expect(answer.status).toBe(500);
      expect(await answer.json()).toEqual({ error: 'Internal server error', message: 'The server could not complete the request' });
      expect(lines).toEqual([`GET /v1/files/[name] failed`]);
      expect(lines.join('\n')).not.toContain(name);
    } finally {
      server.close();
    }
  });
});
