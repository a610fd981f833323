/**
 * The bounds of the env one call may carry (REST execute, the agent's execute-with-prompt and chat, MCP
 * `X-Tool-Env-*` headers). Every value is handed to the sandbox and redacted, in all its encodings, from everything
 * the call produces; the bounds keep that work small (bench/redaction.ts measures redaction at these bounds) and
 * leave room for real secrets: API keys, tokens, a PEM private key or a service-account JSON.
 */
import { errors } from '../infra/errors.js';

/** Variables per call. */
export const MAX_ENV_ENTRIES = 64;
/** UTF-8 bytes of all names and values of a call together (a PEM private key or a service-account JSON fits). */
export const MAX_ENV_BYTES = 8 * 1024;

/** What is wrong with an env's size (names and values as given), or undefined when it is within the bounds. */
export function envBoundsProblem(entries: Array<[string, string]>): string | undefined {
  if (entries.length > MAX_ENV_ENTRIES) return `must have at most ${MAX_ENV_ENTRIES} variables (got ${entries.length})`;
  let total = 0;
  for (const [name, value] of entries) total += Buffer.byteLength(name) + Buffer.byteLength(value);
  if (total > MAX_ENV_BYTES) return `must be at most ${MAX_ENV_BYTES} bytes in all, names and values (got ${total})`;
  return undefined;
}

/** Throws VALIDATION_ERROR naming `field` when an env is over the bounds. */
export function assertEnvBounds(entries: Array<[string, string]>, field: string): void {
  const problem = envBoundsProblem(entries);
  if (problem) throw errors.validation(`Invalid ${field}: ${problem}`, [{ path: field, message: problem }]);
}
