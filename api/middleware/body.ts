/**
 * JSON bodies only, at most 1 MiB, not content-coded. A body-carrying request with another media type, or with a
 * Content-Encoding (gzip…), is a 415; malformed JSON is a 400; a request without a body gets `{}` (a JSON `null` is
 * kept, and refused by the operation's schema like any other non-object); bytes that are not UTF-8, a string (or key) holding U+0000 or a lone surrogate,
 * or nesting deeper than MAX_BODY_DEPTH, is a 400.
 */
import type { Context, Next } from 'koa';
import getRawBody from 'raw-body';
import contentType from 'content-type';
import { errors } from '../../core/infra/errors.js';
import { findUnsafeJson } from './canonical.js';

export const MAX_BODY_BYTES = 1024 * 1024;
/** Deeper JSON is no legitimate request of ours, and walking it costs stack in every later step. */
export const MAX_BODY_DEPTH = 64;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function jsonBody() {
  return async (ctx: Context, next: Next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
    const length = ctx.request.length;
    const hasBody = (length !== undefined && length > 0) || ctx.get('transfer-encoding') !== '';
    if (!hasBody) {
      ctx.request.body = {};
      return next();
    }
    let type = '';
    try {
      type = contentType.parse(ctx.get('content-type')).type;
    } catch {
      throw errors.unsupportedMediaType();
    }
    if (type !== 'application/json' && !type.endsWith('+json')) throw errors.unsupportedMediaType();
    // RFC 9110 §15.5.16: a content coding we do not decode is a 415 naming what we take. Read as identity it would be
    // garbage (or, for a mislabelled body, accepted under a false label).
    const coding = ctx.get('content-encoding').trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') {
      throw errors.unsupportedMediaType('Content-Encoding is not supported: send the JSON body uncompressed', { 'Accept-Encoding': 'identity' });
    }
    // Node reads `Transfer-Encoding: gzip, chunked` as chunked and hands on the bytes as they came: the same false
    // label, one header over. Only chunked framing is taken.
    const transfer = ctx.get('transfer-encoding').trim().toLowerCase();
    if (transfer !== '' && transfer !== 'chunked') {
      throw errors.unsupportedMediaType('Transfer-Encoding other than chunked is not supported: send the JSON body uncompressed', {
        'Accept-Encoding': 'identity',
      });
    }
    if (length !== undefined && length > MAX_BODY_BYTES) throw errors.payloadTooLarge();
    let bytes: Buffer;
    try {
      bytes = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, length });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw errors.payloadTooLarge();
      throw errors.validation('Could not read the request body');
    }
    // JSON is UTF-8 (RFC 8259). A lenient decode would turn invalid bytes into U+FFFD and store the text changed.
    let raw: string;
    try {
      raw = UTF8.decode(bytes);
    } catch {
      throw errors.validation('The request body is not valid UTF-8', [{ path: 'body', message: 'is not valid UTF-8' }]);
    }
    let body: unknown;
    try {
      body = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch {
      throw errors.validation('Malformed JSON body', [{ path: 'body', message: 'is not valid JSON' }]);
    }
    // Postgres text and jsonb cannot hold U+0000 or a lone surrogate: refuse them here rather than fail later as a 500
    // (or mid-job), or be stored changed.
    const unsafe = findUnsafeJson(body, MAX_BODY_DEPTH);
    if (unsafe) throw errors.validation(`Invalid body: ${unsafe.path} ${unsafe.message}`, [unsafe]);
    ctx.request.body = body;
    return next();
  };
}
