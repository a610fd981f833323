/**
 * Structured logging (pino). Secrets are redacted by path; the env of executions and keys never reach a log line.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-admin-token"]',
  'headers.authorization',
  'authorization',
  'env',
  '*.env',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'SECRETS_KEY',
  'ADMIN_TOKEN',
  'LLM_API_KEY',
  'MEILI_API_KEY',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
