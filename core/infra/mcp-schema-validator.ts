/**
 * The JSON Schema validator Toolshed gives the MCP SDK's servers and clients. Each SDK `Server` and `Client` otherwise
 * builds an Ajv instance with every format in its constructor (~0.45 ms of CPU), and the collection endpoint builds a
 * server per HTTP request: about a tenth of the API's CPU for a tools/list (a profile of `npm run bench:memory`'s
 * mcp_list). The servers use the validator only to check an elicitation's answer, which they never request; the
 * worker's client (sandbox/mcp-client.ts) only for a tool's output schema after `listTools()`, which it does not call.
 * So the Ajv is made when a schema is given, for that schema, and nothing is kept between calls: the SDK's own shares
 * one Ajv and compiles every schema it is given into it, so a client calling `listTools()` again and again keeps a
 * compiled schema per tool per call for its life (~3.3 KB each: the memory bench's own clients' heap grew 2.5 KB a
 * call that way, 50.2 → 73.8 MB over 10,000 tools/list calls; 49.2 → 50.3 MB with this one).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

export const lazySchemaValidator = {
  getValidator: <T>(schema: Parameters<AjvJsonSchemaValidator['getValidator']>[0]) => new AjvJsonSchemaValidator().getValidator<T>(schema),
};
