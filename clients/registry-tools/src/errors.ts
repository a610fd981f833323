/**
 * The one error these tools throw. Its message is written for the model (and the developer) reading it: what was
 * attempted, the HTTP status, the registry's code and message, and validation details. Env values passed to a tool
 * are scrubbed from all of it, since a message ends up in prompts and logs.
 */

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface RegistryToolErrorFields {
  /** HTTP status, when the registry answered. */
  status?: number;
  /** The registry's error code (`VALIDATION_ERROR`, `TOOL_UNAVAILABLE`, `TOOL_ERROR`, …) or `NETWORK_ERROR`. */
  code: string;
  details?: ErrorDetail[];
  executionId?: string;
  toolId?: string;
}

export class RegistryToolError extends Error {
  readonly status?: number;
  readonly code: string;
  readonly details?: ErrorDetail[];
  readonly executionId?: string;
  readonly toolId?: string;

  constructor(message: string, fields: RegistryToolErrorFields) {
    super(message);
    this.name = 'RegistryToolError';
    this.status = fields.status;
    this.code = fields.code;
    this.details = fields.details;
    this.executionId = fields.executionId;
    this.toolId = fields.toolId;
  }
}

/** Shorter values are not secrets, and replacing them would garble every message (the service uses the same rule). */
const MIN_SECRET_LENGTH = 4;

/** A scrubber that replaces every env value — raw, JSON-escaped or URL-encoded — with `[redacted]`. */
export function secretScrubber(env: Record<string, string> | undefined): (text: string) => string {
  const forms = new Set<string>();
  for (const value of Object.values(env ?? {})) {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
    forms.add(encodeURIComponent(value));
  }
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((t, secret) => t.split(secret).join('[redacted]'), text);
}

/** `path message; path message` for details that the message does not already spell out. */
export function describeDetails(message: string, details: ErrorDetail[] | undefined): string {
  const missing = (details ?? []).map((d) => `${d.path} ${d.message}`).filter((d) => !message.includes(d));
  return missing.length > 0 ? ` (${missing.join('; ')})` : '';
}

/** Reads `{ success: false, error: { code, message, details? } }` (the contract's shape A) leniently. */
export function readShapeA(body: unknown): { code?: string; message?: string; details?: ErrorDetail[]; executionId?: string } {
  if (!isObject(body)) return {};
  const error = body.error;
  const executionId = typeof body.executionId === 'string' ? body.executionId : undefined;
  if (!isObject(error)) return { executionId };
  const details = Array.isArray(error.details)
    ? error.details.filter(isObject).map((d) => ({ path: String(d.path ?? ''), message: String(d.message ?? '') }))
    : undefined;
  return {
    code: typeof error.code === 'string' ? error.code : undefined,
    message: typeof error.message === 'string' ? error.message : undefined,
    details,
    executionId: executionId ?? (typeof error.executionId === 'string' ? error.executionId : undefined),
  };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
