// @toolshed-examples/webhook-signer — signs and verifies webhook payloads with HMAC, using the shared
// secret from the WEBHOOK_SECRET environment variable. Plain ESM, no dependencies.
import { createHmac, timingSafeEqual } from 'node:crypto';

// ---------------------------------------------------------------------------
// Input checking shared by the tools in this file. Self-contained on purpose:
// this package has no dependencies. `tool()` returns a plain Vercel AI SDK
// style tool object ({ description, inputSchema, execute }) whose execute
// checks its params against inputSchema (and fills defaults) before running.
// ---------------------------------------------------------------------------
const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const joinPath = (path, key) => (path ? `${path}${typeof key === 'number' ? `[${key}]` : `.${key}`}` : String(key));

function checkInput(schema, value, path) {
  const where = path ? `"${path}"` : 'Input';
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    const kind = kindOf(value);
    if (!types.some((t) => t === kind || (t === 'number' && kind === 'integer'))) {
      throw new Error(`${where} must be of type ${types.join(' or ')}, but got ${kind}`);
    }
  }
  if (schema.enum && !schema.enum.includes(value)) {
    throw new Error(`${where} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}; got ${JSON.stringify(value)}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) throw new Error(`${where} must be at least ${schema.minLength} character(s) long`);
    if (schema.maxLength !== undefined && length > schema.maxLength) throw new Error(`${where} must be at most ${schema.maxLength} characters long`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) throw new Error(`${where} must match the pattern ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${where} must be a finite number`);
    if (schema.minimum !== undefined && value < schema.minimum) throw new Error(`${where} must be >= ${schema.minimum}; got ${value}`);
    if (schema.maximum !== undefined && value > schema.maximum) throw new Error(`${where} must be <= ${schema.maximum}; got ${value}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
      throw new Error(`${where} must be > ${schema.exclusiveMinimum}; got ${value}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
      throw new Error(`${where} must be < ${schema.exclusiveMaximum}; got ${value}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) throw new Error(`${where} must contain at least ${schema.minItems} item(s)`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) throw new Error(`${where} must contain at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => checkInput(schema.items, item, joinPath(path, i)));
  }
  if (kindOf(value) === 'object') {
    const props = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) throw new Error(`Missing required parameter "${joinPath(path, key)}"`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      if (props[key]) checkInput(props[key], item, joinPath(path, key));
      else if (schema.additionalProperties === false) {
        throw new Error(
          `Unknown parameter "${joinPath(path, key)}"; expected ${
            Object.keys(props)
              .map((k) => `"${k}"`)
              .join(', ') || 'none'
          }`,
        );
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        checkInput(schema.additionalProperties, item, joinPath(path, key));
      }
    }
  }
}

function tool({ description, inputSchema, execute }) {
  return {
    description,
    inputSchema,
    async execute(params, options) {
      const input = params === undefined || params === null ? {} : params;
      checkInput(inputSchema, input, '');
      const args = { ...input };
      for (const [key, prop] of Object.entries(inputSchema.properties ?? {})) {
        if (args[key] === undefined && prop.default !== undefined) args[key] = structuredClone(prop.default);
      }
      return execute(args, options);
    },
  };
}
// ---------------------------------------------------------------------------

function getSecret() {
  const secret = process.env.WEBHOOK_SECRET;
  if (secret === undefined || secret === '') {
    throw new Error('The WEBHOOK_SECRET environment variable is not set; provide the shared webhook signing secret to use this tool');
  }
  return secret;
}

function signedContent(payload, timestamp) {
  return timestamp === undefined ? payload : `${timestamp}.${payload}`;
}

function computeDigest(payload, timestamp, algorithm, encoding) {
  return createHmac(algorithm, getSecret()).update(signedContent(payload, timestamp), 'utf8').digest(encoding);
}

export const signPayload = tool({
  description:
    'Signs a webhook payload with HMAC-SHA256 (or SHA-512) using the WEBHOOK_SECRET shared secret, optionally binding a timestamp, and returns the signature header value to send.',
  inputSchema: {
    type: 'object',
    properties: {
      payload: { type: 'string', description: 'The exact request body to sign (e.g. the JSON string being sent).', maxLength: 1000000 },
      timestamp: {
        type: 'integer',
        description:
          'Optional Unix time in seconds to bind into the signature (signed content becomes "<timestamp>.<payload>"), which lets receivers reject replays.',
        minimum: 0,
      },
      algorithm: { type: 'string', description: 'HMAC hash algorithm.', enum: ['sha256', 'sha512'], default: 'sha256' },
      encoding: { type: 'string', description: 'Encoding of the signature digest.', enum: ['hex', 'base64'], default: 'hex' },
    },
    required: ['payload'],
    additionalProperties: false,
  },
  async execute({ payload, timestamp, algorithm, encoding }) {
    const digest = computeDigest(payload, timestamp, algorithm, encoding);
    return {
      algorithm: `hmac-${algorithm}`,
      digest,
      signature: `${algorithm}=${digest}`,
      timestamp: timestamp ?? null,
      header: timestamp === undefined ? `${algorithm}=${digest}` : `t=${timestamp},v1=${digest}`,
      signedContentFormat: timestamp === undefined ? '<payload>' : '<timestamp>.<payload>',
    };
  },
});

function parseSignature(signature) {
  const s = signature.trim();
  // "t=1700000000,v1=abcd..." (Stripe style)
  if (/(^|,)\s*t=\d+/.test(s) && /(^|,)\s*v1=/.test(s)) {
    const parts = Object.fromEntries(
      s
        .split(',')
        .map((p) => p.trim().split('='))
        .map(([k, ...v]) => [k, v.join('=')]),
    );
    return {
      timestamp: Number(parts.t),
      digests: s
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p.startsWith('v1='))
        .map((p) => p.slice(3)),
      algorithm: null,
    };
  }
  const m = /^(sha256|sha512)=(.+)$/i.exec(s);
  if (m) return { timestamp: undefined, digests: [m[2]], algorithm: m[1].toLowerCase() };
  return { timestamp: undefined, digests: [s], algorithm: null };
}

function safeEqual(a, b) {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export const verifySignature = tool({
  description:
    'Verifies an incoming webhook HMAC signature against the payload using the WEBHOOK_SECRET shared secret, with a constant-time comparison and optional timestamp tolerance against replay attacks.',
  inputSchema: {
    type: 'object',
    properties: {
      payload: { type: 'string', description: 'The raw request body exactly as received.', maxLength: 1000000 },
      signature: {
        type: 'string',
        description: 'The received signature: "sha256=<hex>", a bare hex/base64 digest, or "t=<timestamp>,v1=<hex>".',
        minLength: 1,
        maxLength: 2000,
      },
      timestamp: { type: 'integer', description: 'The signed Unix timestamp in seconds, when sent separately from the signature.', minimum: 0 },
      algorithm: {
        type: 'string',
        description: 'HMAC hash algorithm (taken from a "sha512=" prefix when present).',
        enum: ['sha256', 'sha512'],
        default: 'sha256',
      },
      toleranceSeconds: {
        type: 'integer',
        description: 'If set and a timestamp is signed, reject signatures older or newer than this many seconds from the current time.',
        minimum: 1,
        maximum: 604800,
      },
    },
    required: ['payload', 'signature'],
    additionalProperties: false,
  },
  async execute({ payload, signature, timestamp, algorithm, toleranceSeconds }) {
    getSecret();
    const parsed = parseSignature(signature);
    const ts = parsed.timestamp ?? timestamp;
    const alg = parsed.algorithm ?? algorithm;
    const candidates = ['hex', 'base64'].map((enc) => computeDigest(payload, ts, alg, enc));
    const valid = parsed.digests.some((d) => candidates.some((c) => safeEqual(d, c)));
    if (!valid) return { valid: false, reason: 'Signature does not match the payload and secret', algorithm: `hmac-${alg}`, timestamp: ts ?? null };
    if (toleranceSeconds !== undefined && ts !== undefined) {
      const age = Math.round(Date.now() / 1000) - ts;
      if (Math.abs(age) > toleranceSeconds) {
        return {
          valid: false,
          reason: `Timestamp is outside the tolerance window (${age} seconds old, tolerance ${toleranceSeconds})`,
          algorithm: `hmac-${alg}`,
          timestamp: ts,
          ageSeconds: age,
        };
      }
      return { valid: true, reason: null, algorithm: `hmac-${alg}`, timestamp: ts, ageSeconds: age };
    }
    return { valid: true, reason: null, algorithm: `hmac-${alg}`, timestamp: ts ?? null };
  },
});
