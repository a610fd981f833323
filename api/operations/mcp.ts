/**
 * The MCP endpoint of a collection: the Model Context Protocol's Streamable HTTP transport (the official SDK's server,
 * stateless; api/mcp/routes.ts). The transport writes every response itself, so the handlers return HANDLED and the bodies
 * below are JSON-RPC as the SDK writes them. A body that is not JSON (or not UTF-8, or over 1 MiB, or of another media
 * type) is refused before the SDK sees it, as a JSON-RPC error with `id: null` too; an unknown or private collection,
 * authentication and rate limits are refused in shape A.
 */
import { z } from 'zod';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { refuseMcpMethod, serveMcpRequest } from '../mcp/routes.js';

const jsonRpcId = z.union([z.string(), z.number(), z.null()]);
const jsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: jsonRpcId.optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).loose(),
  })
  .loose()
  .meta({ description: 'A JSON-RPC error' });
const jsonRpcResult = z.object({ jsonrpc: z.literal('2.0'), id: jsonRpcId, result: z.record(z.string(), z.unknown()) }).loose();
const params = z.object({
  username: z.string().meta({ description: "The collection owner's username (case-insensitive)" }),
  slug: z.string().meta({ description: "The collection's uid" }),
});

/** The canonical URL ends in `/mcp` (what clients and the MCP Inspector expect); the first one, `/http`, stays. */
export const MCP_PATHS = { mcp: '/api/mcp/:username/:slug/mcp', http: '/api/mcp/:username/:slug/http' } as const;
const base = { tag: 'MCP', path: MCP_PATHS.mcp, auth: 'public', errorShape: 'A', params } as const;
const notAllowed = {
  raw: { contentType: 'application/json', schema: jsonRpcError, description: 'Stateless endpoint: POST JSON-RPC messages (`Allow: POST`)' },
};

const canonical: Operation[] = [
  defineOperation({
    ...base,
    id: 'mcp.message',
    method: 'post',
    errorShape: 'jsonrpc',
    readsBody: true,
    summary: "One JSON-RPC message to a collection's MCP server (initialize, tools/list, tools/call, …)",
    description:
      "Public collections need no key; private ones need their owner's key (else 404). Send `Accept: application/json, text/event-stream`. Env for tools comes from `X-Tool-Env-<NAME>` headers and is never stored. JSON-RPC batches are refused (400).",
    responses: {
      200: {
        raw: {
          contentType: 'application/json',
          schema: z.union([jsonRpcResult, jsonRpcError]),
          description:
            "The JSON-RPC response (`tools/call`: the tool output as text content, an imported MCP server's content blocks as it gave them; `isError` on failure)",
        },
      },
      202: { raw: { contentType: 'application/json', description: 'A notification or response accepted; no body' } },
      400: {
        raw: {
          contentType: 'application/json',
          schema: jsonRpcError,
          description: 'Not JSON (-32700 Parse error), a JSON-RPC batch or a malformed message (-32600 Invalid Request)',
        },
      },
      406: {
        raw: {
          contentType: 'application/json',
          schema: jsonRpcError,
          description: 'The `Accept` header does not take both application/json and text/event-stream',
        },
      },
      413: { raw: { contentType: 'application/json', schema: jsonRpcError, description: 'The body is over 1 MiB (-32600)' } },
      415: { raw: { contentType: 'application/json', schema: jsonRpcError, description: 'The body is not JSON, or is content-coded (-32600)' } },
    },
    errors: [404],
    handler: async (ctx, deps) => {
      await serveMcpRequest(ctx, deps);
      return HANDLED;
    },
  }),
  defineOperation({
    ...base,
    id: 'mcp.stream',
    method: 'get',
    summary: 'No server-initiated stream: 405 (the endpoint is stateless)',
    responses: { 405: notAllowed },
    errors: [400, 404],
    handler: async (ctx, deps) => {
      await refuseMcpMethod(ctx, deps);
      return HANDLED;
    },
  }),
  defineOperation({
    ...base,
    id: 'mcp.endSession',
    method: 'delete',
    summary: 'No session to end: 405 (the endpoint is stateless)',
    responses: { 405: notAllowed },
    errors: [400, 404, 413, 415],
    handler: async (ctx, deps) => {
      await refuseMcpMethod(ctx, deps);
      return HANDLED;
    },
  }),
];

/** The same operations on the `/http` URL (ids suffixed `Http`), so that collections added to clients before keep working. */
export const mcpOperations: Operation[] = [
  ...canonical,
  ...canonical.map((op) => ({ ...op, id: `${op.id}Http`, path: MCP_PATHS.http, summary: `${op.summary} (the first URL form, \`/http\`)` })),
];
