import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { coded } from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Deps } from '../../deps';
import { unauthorized } from '../../lib/errors';
import type { buildMcpServer } from './mcp.tools';
import { createTokenBuckets } from './mcp-rate-limit';

type Mcp = { Transport: typeof StreamableHTTPServerTransport; build: typeof buildMcpServer };
/**
 * The MCP SDK (its server, its HTTP transport and the modules under them) and the tools, loaded by the first call:
 * a server nobody asks over MCP keeps none of their code in memory.
 */
let mcp: Promise<Mcp> | null = null;
const loadMcp = () =>
  (mcp ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('./mcp.tools'),
  ]).then(
    ([sdk, tools]) => ({ Transport: sdk.StreamableHTTPServerTransport, build: tools.buildMcpServer }),
    (err) => {
      mcp = null;
      throw err;
    },
  ));

/** A JSON-RPC error answered outside any request id (the SDK's own shape for transport-level refusals). */
const rpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });

/**
 * The MCP endpoint (Streamable HTTP transport of the official SDK, stateless): each POST builds a server and a
 * transport for its caller and closes both when answered, so callers share nothing. Only an API token signs in
 * here (a session cookie or no token: 401); what the tools may do follows the token's owner and its scopes and
 * projects, per call. Each token has a budget of calls per minute (SIGNALBOX_MCP_RATE_LIMIT).
 */
export function mcpRoutes(app: FastifyInstance, deps: Deps) {
  const buckets = createTokenBuckets(deps.config.mcpRateLimit);
  // Every token may reach the endpoint (the read scope is the least one); each tool asks for what it needs.
  const config = { tokenScope: 'read' as const };

  app.post('/api/mcp', { config }, async (request, reply) => {
    const user = request.user;
    const token = request.apiToken;
    if (!user || !token) throw unauthorized(coded('mcp_needs_token'));
    const wait = buckets.take(token.id);
    if (wait > 0)
      return reply
        .status(429)
        .header('retry-after', String(wait))
        .send(rpcError(`Too many requests: try again in ${wait} seconds`));
    const { Transport, build } = await loadMcp();
    // A caller who left before this point (while it signed in or the SDK loaded) has its call neither run nor
    // answered: its 'close' has gone by, so nothing built for it would ever be closed.
    if (reply.raw.closed) {
      reply.hijack();
      return;
    }
    const server = build(deps, { user, limits: request.tokenLimits, token });
    const transport = new Transport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent)
        reply.raw
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify(rpcError('Internal error')));
    }
  });

  // Stateless: no session to stream to or end (as the SDK's stateless example answers).
  const notAllowed = async (_: unknown, reply: FastifyReply) =>
    reply.status(405).header('allow', 'POST').send(rpcError('Method not allowed.'));
  app.get('/api/mcp', { config }, notAllowed);
  app.delete('/api/mcp', { config }, notAllowed);
}
