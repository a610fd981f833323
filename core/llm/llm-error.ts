/**
 * The one error the LLM layer throws for a failed vendor call (HTTP error, unreachable server, malformed answer).
 * Its `message` is a short, stable sentence meant for users (run records, SSE `error` events, API errors): it never
 * holds the provider's address, its response body or the API key, because whatever the vendor says may name internal
 * hosts or echo the key, and those records are readable by callers (anonymous ones, for prompt execution). The vendor's own words
 * go to `detail`, for the server log only (the key is removed from it too). Callers map it to their own error shape.
 */
export class LlmError extends Error {
  /** The code users see with the message (run records, SSE `error` events). */
  readonly code = 'LLM_ERROR';

  constructor(
    message: string,
    /**
     * The vendor's HTTP status, when there was one. Not named `status`: the API's error middleware reads `status`
     * as the HTTP status of the response, and a vendor's 400 is not the caller's validation error.
     */
    readonly vendorStatus?: number,
    /** What the vendor said, for the server log only. */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/** The user-facing sentence for a vendor failure: by its HTTP status, never by what the vendor wrote. */
export function publicLlmMessage(failure: { status?: number; reachable: boolean }): string {
  const { status } = failure;
  if (status !== undefined && status >= 400 && status < 500) return `LLM provider rejected the request (status ${status})`;
  if (status !== undefined) return `LLM provider unavailable (status ${status})`;
  return failure.reachable ? 'LLM provider gave an unusable answer' : 'LLM provider unavailable';
}

/** What to log about an LLM failure (no key: `detail` never holds it). */
export function llmLogFields(err: LlmError): { llmStatus?: number; llmDetail?: string } {
  return { llmStatus: err.vendorStatus, llmDetail: err.detail };
}
