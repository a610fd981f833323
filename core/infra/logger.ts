/**
 * Structured logging (pino). Secrets are redacted by path; the env of executions and keys never reach a log line.
 * JSON lines by default; pino-pretty's readable lines only for a person at a terminal (LOG_FORMAT=auto and stdout a
 * TTY), never under tests or CI, whose stdout is a pipe (and which set LOG_FORMAT=json besides). Each line carries the
 * request id and trace id of what it is about (core/infra/log-context.ts).
 */
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { logFields } from './log-context.js';

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

export type LogFormat = 'auto' | 'json' | 'pretty';

/** What `auto` means: pretty only when the logs go to a terminal. */
export function resolveLogFormat(requested: LogFormat, stdoutIsTTY: boolean): 'json' | 'pretty' {
  if (requested === 'auto') return stdoutIsTTY ? 'pretty' : 'json';
  return requested;
}

const NOT_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/**
 * A pretty line's text: the message, then each field it does not already say as key=value (so a message that names
 * its data is not followed by a copy of it), then an error's stack on the lines below.
 */
export function prettyMessage(log: Record<string, unknown>): string {
  const msg = String(log.msg ?? '');
  const fields: string[] = [];
  let stack = '';
  for (const [key, value] of Object.entries(log)) {
    if (NOT_FIELDS.has(key) || value === undefined) continue;
    const error = value as { message?: unknown; stack?: unknown };
    if (typeof error === 'object' && error !== null && typeof error.stack === 'string') {
      fields.push(`${key}=${JSON.stringify(String(error.message ?? ''))}`);
      stack += `\n${error.stack}`;
      continue;
    }
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const said = typeof value === 'string' ? msg.includes(text) : new RegExp(`(^|[^\\w.])${escapeRegExp(text)}($|[^\\w.])`).test(msg);
    if (!said) fields.push(`${key}=${typeof value === 'string' && /\s/.test(text) ? JSON.stringify(text) : text}`);
  }
  return [msg, ...fields].join('  ') + stack;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A logger at `level`. `format` defaults to JSON so tests, benches and the CLI keep machine-readable lines; process
 * entries pass the configured LOG_FORMAT. `destination` defaults to stdout.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  // Every line says which request (reqId) and trace (traceId, spanId) it belongs to, when it belongs to one.
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, mixin: logFields };
  if (resolveLogFormat(format, Boolean(process.stdout.isTTY)) === 'json') return pino(options, destination);
  const pretty = pinoPretty({
    destination: destination ?? 1,
    colorize: pinoPretty.isColorSupported,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    hideObject: true,
    messageFormat: (log) => prettyMessage(log),
    sync: true,
  });
  return pino(options, pretty);
}
