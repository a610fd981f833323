/**
 * The one error type of the service. Factories make every error a route can raise; the error middleware renders
 * them in the contract's shape (A, or B on scenario routes).
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TOOL_UNAVAILABLE'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'INTERNAL'
  | 'SERVICE_UNAVAILABLE'
  | 'EXECUTION_TIMEOUT'
  | 'GONE';

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra top-level fields of the error body (e.g. executionId on a 504, resetAt on a quota 429). */
    readonly extra?: Record<string, unknown>,
    /** Response headers to set with the error (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const errors = {
  validation: (message: string, details?: ErrorDetail[]) => new AppError('VALIDATION_ERROR', 400, message, details),
  unauthorized: (message = 'A valid API key is required') => new AppError('UNAUTHORIZED', 401, message),
  forbidden: (message = 'Only the owner may do this') => new AppError('FORBIDDEN', 403, message),
  notFound: (what: string, id?: string) => new AppError('NOT_FOUND', 404, id === undefined ? `${what} not found` : `${what} '${id}' not found`),
  /** A path that exists, asked with a method it does not take (or one the router does not know at all). */
  methodNotAllowed: (method: string, allow: string) =>
    new AppError('METHOD_NOT_ALLOWED', 405, `${method} is not allowed here${allow ? `; allowed: ${allow}` : ''}`, undefined, undefined, {
      ...(allow ? { Allow: allow } : {}),
    }),
  conflict: (message: string) => new AppError('CONFLICT', 409, message),
  payloadTooLarge: (message = 'Body exceeds 1 MiB') => new AppError('PAYLOAD_TOO_LARGE', 413, message),
  unsupportedMediaType: (message = 'Request body must be application/json', headers?: Record<string, string>) =>
    new AppError('UNSUPPORTED_MEDIA_TYPE', 415, message, undefined, undefined, headers),
  toolUnavailable: (message: string) => new AppError('TOOL_UNAVAILABLE', 422, message),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError('RATE_LIMITED', 429, `Retry after ${retryAfterSeconds} seconds`, undefined, undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
  /** A caller's queued and running work is capped: wait for one to finish (there is no fixed window to wait out). */
  tooManyActive: (max: number) =>
    new AppError(
      'RATE_LIMITED',
      429,
      'Retry after 1 seconds',
      [{ path: 'executions', message: `at most ${max} may be queued or running at once` }],
      undefined,
      {
        'Retry-After': '1',
      },
    ),
  quotaExceeded: (resetAt: string) => new AppError('QUOTA_EXCEEDED', 429, 'Daily scenario run quota exhausted', undefined, { quotaRemaining: 0, resetAt }),
  executionTimeout: (executionId: string) =>
    new AppError('EXECUTION_TIMEOUT', 504, 'The execution did not finish in time; poll it by its id', undefined, {
      executionId,
    }),
  /** Kept for a configured time only (retention): it existed, and what was asked for is deleted. */
  gone: (message: string) => new AppError('GONE', 410, message),
  internal: (message = 'Internal server error') => new AppError('INTERNAL', 500, message),
  /** The database is unreachable (a restart, a failover): nothing was done, and the same request may be sent again. */
  unavailable: (retryAfterSeconds = 5) =>
    new AppError('SERVICE_UNAVAILABLE', 503, `The service is briefly unavailable; retry after ${retryAfterSeconds} seconds`, undefined, undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
};

/** Maps a Postgres driver error to an AppError once, so that no route inspects SQLSTATEs. */
export function fromPgError(err: unknown): AppError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  switch (code) {
    case '23505':
      return errors.conflict('A resource with these values already exists');
    case '23503':
      return errors.notFound('Referenced resource');
    case '57014':
      return errors.internal('The database query timed out');
    case '22P02':
      return errors.validation('Malformed identifier');
    default:
      return undefined;
  }
}
