/** What an import answers: the package and its tools, or why nothing was recorded (the task keeps it on the import's row). */
import type { ErrorDetail } from '../../core/infra/errors.js';
import type { ImportStartup } from '../../core/repos/package-imports.js';

/** `startup`: an MCP server's start-up, as worker/import/mcp-startup.ts ran it (kept on the import's row). */
export type ImportResult = (
  | { ok: true; packageId: string; toolIds: string[] }
  | { ok: false; error: { code: 'VALIDATION_ERROR' | 'FORBIDDEN' | 'CONFLICT' | 'INTERNAL'; message: string; details?: ErrorDetail[] } }
) & { startup?: ImportStartup };

export function invalid(message: string, details: ErrorDetail[]): ImportResult {
  return { ok: false, error: { code: 'VALIDATION_ERROR', message, details } };
}
