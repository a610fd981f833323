/** A JSON object: not null, not an array (what a parsed body, an MCP argument or a schema must be before its keys are read). */
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
