/**
 * The single choke point for talking to the registry: one JSON request, answered with the status and the parsed
 * body, or a RegistryToolError when nothing usable came back (network failure, a non-JSON answer).
 */
import type { RegistryConfig } from './config.js';
import { RegistryToolError } from './errors.js';

export interface RegistryResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface RegistryRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  signal?: AbortSignal;
  /** What the caller was doing, for messages: "Searching the registry", "Executing pkg::tool". */
  action: string;
  scrub: (text: string) => string;
  toolId?: string;
}

export async function requestJson(config: RegistryConfig, req: RegistryRequest): Promise<RegistryResponse> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  let res: Response;
  try {
    res = await config.fetch(req.url, {
      method: req.method,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: req.signal,
    });
  } catch (err) {
    if (req.signal?.aborted) throw err; // the agent was cancelled: let its abort error through unchanged
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new RegistryToolError(req.scrub(`${req.action} failed: could not reach ${req.url}: ${reason}`), {
      code: 'NETWORK_ERROR',
      toolId: req.toolId,
    });
  }
  const text = await res.text();
  try {
    return { status: res.status, headers: res.headers, body: JSON.parse(text) };
  } catch {
    const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
    throw new RegistryToolError(req.scrub(`${req.action} failed: HTTP ${res.status} from ${req.url} was not JSON${snippet ? `: ${snippet}` : ''}`), {
      status: res.status,
      code: 'BAD_RESPONSE',
      toolId: req.toolId,
    });
  }
}
