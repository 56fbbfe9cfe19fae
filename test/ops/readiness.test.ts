import { describe, expect, it } from 'vitest';

import { readiness } from '../../server/metrics/readiness.js';
import { type TestServer,testServerForFile } from '../helpers/test-server.js';

// The browsers' state comes from the engine; here a stand-in reports it over a real data directory and its stores.
const over = (server: TestServer) => ({ filesDir: server.dataDir, stores: () => server.srv.services.stores.health() });
const server = testServerForFile({ browsers: 1 });

describe('readiness', () => {
  it('says which browsers are down when none is up', async () => {
    const report = await readiness({ ...over(server), started: () => true, browsers: () => ({ total: 2, ready: 0, down: [1, 2] }) });
    expect(report).toMatchObject({ status: 'not ready', engine: false, reasons: ['none of the 2 browsers is up (they are being started)'] });
  });

  it('stays ready while one browser of two is up', async () => {
    const report = await readiness({ ...over(server), started: () => true, browsers: () => ({ total: 2, ready: 1, down: [2] }) });
    expect(report).toMatchObject({ status: 'ready', reasons: [], browsers: { total: 2, ready: 1, down: [2] } });
  });

  it('is not ready while the service starts or stops', async () => {
    const report = await readiness({ ...over(server), started: () => false, browsers: () => ({ total: 1, ready: 1, down: [] }) });
    expect(report.reasons).toEqual(['the service is starting or shutting down']);
  });
});
