import type Router from '@koa/router';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

import { MAX_BODY_KB } from '../contract/v1.js';
import { RateLimitedError } from '../domain-errors.js';
import { baseUrlOf } from './base-url.js';
import { ERROR_TITLES } from './error-responses.js';
import { type McpBatchDeps, registerMcpBatchTools } from './mcp-batch-tools.js';
import { registerMcpTools, toolRefusal } from './mcp-tools.js';
import { exactRouter } from './routing.js';
import { accountBudget, type RateBudget, v1Auth, type V1State } from './v1-auth.js';

/** The version the MCP server reports: the package's own. */
const SERVER_INFO = { name: 'screenshot-appliance', version: '0.1.0' };

/**
 * POST /v1/mcp — the Model Context Protocol over Streamable HTTP, stateless: each request gets
 * a server and a transport of its own, made after the v1 chain (key, IP whitelist, e-mail,
 * plan, requests per second) has identified its account, and closed when the answer ends. No
 * session id, so GET (a standing event stream) and DELETE (ending a session) are 405, as the
 * router answers any method a route does not have. Each tool call creates ordinary jobs, so
 * the quota, the fair queue and the egress guard apply as to POST /v1/screenshot. A batch spends
 * the requests per second of every request in it (spendPerRequest).
 */
export function mcpRoutes(deps: McpBatchDeps): Router {
  const router = exactRouter('/v1');
  const auth = v1Auth(deps);

  router.post('/mcp', auth, async (ctx) => {
    const state = ctx.state.v1 as V1State;
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
    const caller = { state, base: baseUrlOf(ctx, deps.settings) };
    registerMcpTools(server, deps, caller);
    registerMcpBatchTools(server, deps, caller);
    // The same bound on a call as on POST /v1/screenshot: a tool's html may be as large as the job's.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, maxRequestBodySize: MAX_BODY_KB * 1024 });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    spendPerRequest(transport, accountBudget(deps, state.account));
    // The transport writes the answer (JSON, or an event stream while a tool runs) itself, so
    // the X-RateLimit-* headers go out now, as they stand before the call (v1Auth's come too late).
    ctx.set(await deps.quota.headers(state.account));
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res);
  });

  return router;
}

/** The JSON-RPC error code of a request refused for the requests per second (implementation-defined server error). */
const RATE_LIMITED = -32000;

/**
 * Each request of a JSON-RPC batch (the transport takes up to 100 in one POST) spends the
 * account's requests per second as if it had come alone: the POST's own request, spent by the
 * v1 chain, pays for the first, and each further one takes its own. A request past the limit
 * never reaches the server: a tool call is answered with the tool error every limit gives
 * (`Rate limit exceeded: …`), anything else with a JSON-RPC error saying the same.
 */
function spendPerRequest(transport: Transport, budget: RateBudget): void {
  // Set by server.connect: the server's own dispatch, which a refused request never reaches.
  const serve = transport.onmessage;
  let requests = 0;
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    if (isJSONRPCRequest(message) && requests++ > 0) {
      const wait = budget.limiter.take(budget.id);
      if (wait > 0) {
        void transport.send(refused(message, new RateLimitedError(budget.refusal, wait))).catch(() => undefined);
        return;
      }
    }
    serve?.(message, extra);
  };
}

/** The answer to a request refused for the requests per second. */
function refused(request: JSONRPCRequest, err: RateLimitedError): JSONRPCMessage {
  if (request.method === 'tools/call') return { jsonrpc: '2.0', id: request.id, result: toolRefusal(err) };
  return {
    jsonrpc: '2.0',
    id: request.id,
    error: { code: RATE_LIMITED, message: `${ERROR_TITLES[429]}: ${err.message}`, data: { retry_after: err.retryAfterSeconds } },
  };
}
