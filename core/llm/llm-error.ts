/**
 * The one error the LLM layer throws for a failed vendor call (HTTP error, unreachable server, malformed answer).
 * Its message is safe to log and to show: it never carries the API key. Callers map it to their own error shape.
 */
export class LlmError extends Error {
  constructor(
    message: string,
    /** The vendor's HTTP status, when there was one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}
