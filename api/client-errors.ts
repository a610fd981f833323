/**
 * Requests that Node's HTTP parser refuses before Koa sees them (a request line or headers over the size limit, bytes
 * that are not HTTP, both Content-Length and Transfer-Encoding, a request that did not arrive in time) are answered in
 * the contract's error shape too, instead of Node's bare status line; then the connection is closed, as Node does.
 */
import type { Socket } from 'node:net';

/** Request line plus headers: enough for a 4,000-character non-ASCII search query, percent-encoded (36 KB). */
export const MAX_HEADER_BYTES = 64 * 1024;

function answerFor(code: string | undefined): { status: number; reason: string; code: string; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      code: 'VALIDATION_ERROR',
      message: `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB`,
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time' };
  }
  return { status: 400, reason: 'Bad Request', code: 'VALIDATION_ERROR', message: 'Malformed HTTP request' };
}

export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // A response already under way on this connection cannot be followed by another one: just close it.
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const a = answerFor(err.code);
  const body = JSON.stringify({ success: false, error: { code: a.code, message: a.message } });
  socket.end(
    `HTTP/1.1 ${a.status} ${a.reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
