import type { TestServer } from './test-server.js';

/**
 * Runs `run` with some of the server's settings changed (PUT /admin/api/settings), then puts
 * them back as they were, whether `run` failed or not. An empty patch changes nothing.
 */
export async function withSettings<T>(server: TestServer, patch: Record<string, number>, run: () => Promise<T>): Promise<T> {
  if (Object.keys(patch).length === 0) return run();
  const before = (await server.admin('GET', '/settings')).body;
  const changed = await server.admin('PUT', '/settings', patch);
  if (changed.status !== 200) throw new Error(`settings: ${JSON.stringify(changed.body)}`);
  try {
    return await run();
  } finally {
    await server.admin('PUT', '/settings', Object.fromEntries(Object.keys(patch).map((name) => [name, before[name]])));
  }
}
