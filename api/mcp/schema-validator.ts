/**
 * The JSON Schema validator the collection MCP servers are given. Each SDK `Server` otherwise builds an Ajv instance
 * with every format in its constructor — and the endpoint builds a server per HTTP request: about a tenth of the API's
 * CPU for a tools/list (a profile of `npm run bench:memory`'s mcp_list). The SDKs use the validator only to check an
 * elicitation's answer, which these servers never request; so the Ajv is made when a schema is given, for that schema,
 * and nothing is kept between requests (a shared Ajv would keep every compiled schema for the process's life).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

export const lazySchemaValidator = {
  getValidator: <T>(schema: Parameters<AjvJsonSchemaValidator['getValidator']>[0]) => new AjvJsonSchemaValidator().getValidator<T>(schema),
};
