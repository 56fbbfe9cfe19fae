import type Router from '@koa/router';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

import { MAX_BODY_KB } from '../contract/v1.js';
import { baseUrlOf } from './base-url.js';
import { registerMcpTools } from './mcp-tools.js';
import { exactRouter } from './routing.js';
import { v1Auth, type V1State } from './v1-auth.js';
import type { V1Deps } from './v1-jobs.js';

/** The version the MCP server reports: the package's own. */
const SERVER_INFO = { name: 'screenshot-appliance', version: '0.1.0' };

/**
 * POST /v1/mcp — the Model Context Protocol over Streamable HTTP, stateless: each request gets
 * a server and a transport of its own, made after the v1 chain (key, IP whitelist, e-mail,
 * plan, requests per second) has identified its account, and closed when the answer ends. No
 * session id, so GET (a standing event stream) and DELETE (ending a session) are 405, as the
 * router answers any method a route does not have. Each tool call creates ordinary jobs, so
 * the quota, the fair queue and the egress guard apply as to POST /v1/screenshot.
 */
export function mcpRoutes(deps: V1Deps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);

  router.post('/mcp', auth, async (ctx) => {
    const state = ctx.state.v1 as V1State;
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
    registerMcpTools(server, deps, { state, base: baseUrlOf(ctx, deps.settings) });
    // The same bound on a call as on POST /v1/screenshot: a tool's html may be as large as the job's.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, maxRequestBodySize: MAX_BODY_KB * 1024 });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the answer (JSON, or an event stream while a tool runs) itself, so
    // the X-RateLimit-* headers go out now, as they stand before the call (v1Auth's come too late).
    ctx.set(await deps.quota.headers(state.account));
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res);
  });

  return router;
}
