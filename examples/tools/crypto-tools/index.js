// @toolshed-examples/crypto-tools — hashing, password generation and strength checks, UUIDs and secure
// random tokens, all with node:crypto. Plain ESM, no dependencies.
import { createHash, getHashes, randomBytes, randomInt, randomUUID } from 'node:crypto';

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

const HASHES = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha3-256', 'sha3-384', 'sha3-512'];

function decodeInput(text, encoding) {
  if (encoding === 'utf8') return Buffer.from(text, 'utf8');
  if (encoding === 'hex') {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw new Error('"text" is not valid hex (an even number of 0-9/a-f characters)');
    return Buffer.from(text, 'hex');
  }
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(clean) || clean.replace(/=+$/, '').length % 4 === 1) throw new Error('"text" is not valid base64');
  return Buffer.from(clean.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

export const hashText = tool({
  description:
    'Computes a cryptographic hash digest (MD5, SHA-1, SHA-256, SHA-384, SHA-512 or SHA-3) of a text or binary input, returned as hex, base64 or base64url; useful for checksums.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The data to hash.', maxLength: 1000000 },
      algorithm: {
        type: 'string',
        description: 'Hash algorithm. MD5 and SHA-1 are broken for security uses; prefer SHA-256 or stronger.',
        enum: HASHES,
        default: 'sha256',
      },
      encoding: { type: 'string', description: 'Encoding of the returned digest.', enum: ['hex', 'base64', 'base64url'], default: 'hex' },
      inputEncoding: {
        type: 'string',
        description: 'How to read "text": as UTF-8 text, or as hex/base64 encoded bytes.',
        enum: ['utf8', 'hex', 'base64'],
        default: 'utf8',
      },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, algorithm, encoding, inputEncoding }) {
    if (!getHashes().includes(algorithm)) throw new Error(`Hash algorithm ${algorithm} is not available in this Node.js build`);
    const data = decodeInput(text, inputEncoding);
    const digest = createHash(algorithm).update(data).digest(encoding);
    return { algorithm, encoding, digest, inputBytes: data.length, digestBits: createHash(algorithm).digest().length * 8 };
  },
});

// ----------------------------------------------------------------------------- passwords
const SETS = {
  lowercase: 'abcdefghijklmnopqrstuvwxyz',
  uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  symbols: '!@#$%^&*()-_=+[]{};:,.<>?/~',
};
const AMBIGUOUS = /[Il1O0o|`'";:,.]/g;

function secureShuffle(arr) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return arr;
}

export const generatePassword = tool({
  description:
    'Generates strong random passwords with a cryptographically secure generator, choosing the length and the character classes (lowercase, uppercase, digits, symbols) and optionally excluding look-alike characters.',
  inputSchema: {
    type: 'object',
    properties: {
      length: { type: 'integer', description: 'Number of characters per password.', minimum: 4, maximum: 256, default: 20 },
      lowercase: { type: 'boolean', description: 'Include lowercase letters a-z.', default: true },
      uppercase: { type: 'boolean', description: 'Include uppercase letters A-Z.', default: true },
      digits: { type: 'boolean', description: 'Include digits 0-9.', default: true },
      symbols: { type: 'boolean', description: 'Include symbols such as !@#$%.', default: true },
      excludeAmbiguous: {
        type: 'boolean',
        description: 'Leave out characters that are easy to confuse (I, l, 1, O, 0, o and similar punctuation).',
        default: false,
      },
      count: { type: 'integer', description: 'How many passwords to generate.', minimum: 1, maximum: 50, default: 1 },
    },
    additionalProperties: false,
  },
  async execute({ length, lowercase, uppercase, digits, symbols, excludeAmbiguous, count }) {
    const chosen = Object.entries({ lowercase, uppercase, digits, symbols })
      .filter(([, on]) => on)
      .map(([name]) => (excludeAmbiguous ? SETS[name].replace(AMBIGUOUS, '') : SETS[name]));
    if (chosen.length === 0) throw new Error('Enable at least one character class (lowercase, uppercase, digits or symbols)');
    if (length < chosen.length) throw new Error(`"length" must be at least ${chosen.length} to include every selected character class`);
    const pool = chosen.join('');
    const passwords = [];
    for (let n = 0; n < count; n++) {
      // one character from each selected class, the rest from the whole pool, then shuffle
      const chars = chosen.map((set) => set[randomInt(set.length)]);
      while (chars.length < length) chars.push(pool[randomInt(pool.length)]);
      passwords.push(secureShuffle(chars).join(''));
    }
    return { passwords, length, poolSize: pool.length, entropyBits: Math.round(length * Math.log2(pool.length) * 10) / 10 };
  },
});

const COMMON_PASSWORDS = [
  'password',
  '123456',
  '123456789',
  '12345678',
  '12345',
  'qwerty',
  'abc123',
  'password1',
  '111111',
  '123123',
  'admin',
  'letmein',
  'welcome',
  'monkey',
  'login',
  'dragon',
  'football',
  'baseball',
  'iloveyou',
  'master',
  'sunshine',
  'ashley',
  'bailey',
  'shadow',
  'superman',
  'qwertyuiop',
  'trustno1',
  'passw0rd',
  'princess',
  'starwars',
  'whatever',
  'freedom',
  'hello',
  'charlie',
  'donald',
  'michael',
  'jordan',
  'hunter',
  'ranger',
  'buster',
  'soccer',
  'hockey',
  'killer',
  'george',
  'computer',
  'michelle',
  'jessica',
  'pepper',
  'zaq12wsx',
  '1qaz2wsx',
  'qazwsx',
  'asdfgh',
  'zxcvbn',
  'secret',
  'summer',
  'winter',
  'spring',
  'autumn',
  'love',
  'god',
  'test',
  'guest',
  'root',
  'changeme',
  'default',
  'mustang',
  'access',
  'flower',
  'cheese',
  'batman',
  'thomas',
  'tigger',
  'robert',
  'matrix',
  'internet',
  'samsung',
  'orange',
  'banana',
  'apple',
  'chocolate',
  'cookie',
  'purple',
  'angel',
  'family',
];
const COMMON_SET = new Set(COMMON_PASSWORDS);
const LEET = { 0: 'o', 1: 'i', 3: 'e', 4: 'a', 5: 's', 7: 't', '@': 'a', $: 's', '!': 'i' };
const KEYBOARD_ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm', '1234567890', 'abcdefghijklmnopqrstuvwxyz'];

function crackTimeText(seconds) {
  if (seconds < 1) return 'less than a second';
  const units = [
    ['century', 3155760000],
    ['year', 31557600],
    ['month', 2629800],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  if (seconds >= 100 * 3155760000) return 'centuries';
  for (const [name, size] of units)
    if (seconds >= size) {
      const n = Math.round(seconds / size);
      return `${n} ${name === 'century' ? (n === 1 ? 'century' : 'centuries') : name + (n === 1 ? '' : 's')}`;
    }
  return 'less than a second';
}

export const checkPasswordStrength = tool({
  description:
    'Scores password strength from 0 (very weak) to 4 (very strong) by estimating entropy and penalising common passwords, keyboard sequences, repeats and dates, with feedback and estimated crack time.',
  inputSchema: {
    type: 'object',
    properties: {
      password: { type: 'string', description: 'The password to evaluate. It is not stored or logged.', minLength: 1, maxLength: 1000 },
    },
    required: ['password'],
    additionalProperties: false,
  },
  async execute({ password }) {
    const chars = [...password];
    const checks = {
      length: chars.length,
      lowercase: /\p{Ll}/u.test(password),
      uppercase: /\p{Lu}/u.test(password),
      digits: /\d/.test(password),
      symbols: /[^\p{L}\p{N}\s]/u.test(password),
      spaces: /\s/.test(password),
      otherUnicode: /[^\x00-\x7f]/.test(password),
    };
    let pool = 0;
    if (checks.lowercase) pool += 26;
    if (checks.uppercase) pool += 26;
    if (checks.digits) pool += 10;
    if (checks.symbols) pool += 33;
    if (checks.spaces) pool += 1;
    if (checks.otherUnicode) pool += 100;
    const bitsPerChar = Math.log2(Math.max(pool, 2));
    const lower = password.toLowerCase();
    const deleet = [...lower].map((c) => LEET[c] ?? c).join('');
    const patterns = [];
    // cost (in "characters") of each position; patterns lower it
    const cost = chars.map(() => 1);
    const markCheap = (start, len, perChar, label) => {
      for (let k = start; k < start + len && k < cost.length; k++) cost[k] = Math.min(cost[k], perChar);
      patterns.push(label);
    };
    // common words / passwords (also in leetspeak)
    for (const word of COMMON_PASSWORDS) {
      if (word.length < 4) continue;
      const idx = deleet.indexOf(word);
      if (idx !== -1) markCheap(idx, word.length, 0.15, `contains the common password or word "${word}"`);
    }
    // repeated characters (aaaa) and repeated chunks (abcabc)
    for (const m of password.matchAll(/(.)\1{2,}/gu)) markCheap(m.index + 1, m[0].length - 1, 0.1, `repeated character "${m[1]}"`);
    for (const m of password.matchAll(/(.{2,}?)\1+/gu))
      if (m[0].length >= 4) markCheap(m.index + m[1].length, m[0].length - m[1].length, 0.1, `repeated sequence "${m[1]}"`);
    // sequences along the keyboard / alphabet / digits, forwards or backwards
    for (const row of KEYBOARD_ROWS) {
      for (const seqRow of [row, [...row].reverse().join('')]) {
        for (let len = Math.min(lower.length, seqRow.length); len >= 3; len--) {
          let found = false;
          for (let s = 0; s + len <= seqRow.length; s++) {
            const idx = lower.indexOf(seqRow.slice(s, s + len));
            if (idx !== -1) {
              markCheap(idx + 1, len - 1, 0.1, `keyboard or alphabet sequence "${password.slice(idx, idx + len)}"`);
              found = true;
              break;
            }
          }
          if (found) break;
        }
      }
    }
    // years / dates
    for (const m of password.matchAll(/(?:19|20)\d{2}/g)) markCheap(m.index, 4, 0.3, `looks like a year (${m[0]})`);
    const effectiveChars = cost.reduce((a, b) => a + b, 0);
    let entropyBits = Math.round(effectiveChars * bitsPerChar * 10) / 10;
    const isCommon = COMMON_SET.has(lower) || COMMON_SET.has(deleet) || COMMON_SET.has(deleet.replace(/\d+$/, ''));
    if (isCommon) entropyBits = Math.min(entropyBits, 10);
    let score = entropyBits < 28 ? 0 : entropyBits < 36 ? 1 : entropyBits < 60 ? 2 : entropyBits < 80 ? 3 : 4;
    if (chars.length < 8) score = Math.min(score, 1);
    if (isCommon) score = 0;
    const feedback = [];
    if (isCommon) feedback.push('This is one of the most commonly used passwords; never use it.');
    if (chars.length < 12) feedback.push('Use at least 12 characters; length matters more than complexity.');
    if ([checks.lowercase, checks.uppercase, checks.digits, checks.symbols].filter(Boolean).length < 3)
      feedback.push('Mix lowercase, uppercase, digits and symbols, or use a long passphrase of random words.');
    for (const p of [...new Set(patterns)].slice(0, 5)) feedback.push(`Avoid predictable patterns: ${p}.`);
    if (score >= 3 && feedback.length === 0) feedback.push('Strong password. Store it in a password manager.');
    const guesses = 2 ** Math.max(0, entropyBits - 1);
    return {
      score,
      label: ['very weak', 'weak', 'fair', 'strong', 'very strong'][score],
      entropyBits,
      isCommonPassword: isCommon,
      checks,
      patterns: [...new Set(patterns)],
      crackTime: {
        onlineThrottled: crackTimeText(guesses / (100 / 3600)),
        offlineFastHash: crackTimeText(guesses / 1e10),
      },
      feedback,
    };
  },
});

// ----------------------------------------------------------------------------- UUID
function uuidV7() {
  const b = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const generateUuid = tool({
  description:
    'Generates random UUIDs (GUIDs): version 4 (fully random) or version 7 (time-ordered, sortable, good for database keys), using a cryptographically secure random source.',
  inputSchema: {
    type: 'object',
    properties: {
      version: { type: 'integer', description: 'UUID version: 4 (random) or 7 (Unix-time ordered).', enum: [4, 7], default: 4 },
      count: { type: 'integer', description: 'How many UUIDs to generate.', minimum: 1, maximum: 1000, default: 1 },
      uppercase: { type: 'boolean', description: 'Return uppercase hex digits.', default: false },
    },
    additionalProperties: false,
  },
  async execute({ version, count, uppercase }) {
    const uuids = [];
    for (let i = 0; i < count; i++) {
      const u = version === 7 ? uuidV7() : randomUUID();
      uuids.push(uppercase ? u.toUpperCase() : u);
    }
    if (version === 7) uuids.sort();
    return { version, count, uuids };
  },
});

export const validateUuid = tool({
  description:
    'Validates a UUID/GUID string and reports its version, variant and normalized form; for time-based UUIDs (v1, v6, v7) it also decodes the embedded timestamp.',
  inputSchema: {
    type: 'object',
    properties: {
      uuid: { type: 'string', description: 'The UUID to check, with or without dashes, braces or a "urn:uuid:" prefix.', maxLength: 100 },
    },
    required: ['uuid'],
    additionalProperties: false,
  },
  async execute({ uuid }) {
    const stripped = uuid
      .trim()
      .replace(/^urn:uuid:/i, '')
      .replace(/^\{(.*)\}$/, '$1');
    let hex;
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(stripped)) hex = stripped.replace(/-/g, '').toLowerCase();
    else if (/^[0-9a-f]{32}$/i.test(stripped)) hex = stripped.toLowerCase();
    else return { valid: false, reason: 'Not a UUID: expected 32 hex digits, optionally grouped 8-4-4-4-12 with dashes' };
    const normalized = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    if (/^0+$/.test(hex)) return { valid: true, normalized, version: null, variant: null, isNil: true, isMax: false, timestamp: null };
    if (/^f+$/.test(hex)) return { valid: true, normalized, version: null, variant: null, isNil: false, isMax: true, timestamp: null };
    const version = parseInt(hex[12], 16);
    const v = parseInt(hex[16], 16);
    const variant = v < 8 ? 'NCS (reserved)' : v < 12 ? 'RFC 9562' : v < 14 ? 'Microsoft (reserved)' : 'future (reserved)';
    let timestamp = null;
    if (variant === 'RFC 9562') {
      let ms = null;
      if (version === 7) ms = Number(BigInt('0x' + hex.slice(0, 12)));
      if (version === 1 || version === 6) {
        const ticks =
          version === 1
            ? (BigInt('0x' + hex.slice(13, 16)) << 48n) | (BigInt('0x' + hex.slice(8, 12)) << 32n) | BigInt('0x' + hex.slice(0, 8))
            : (BigInt('0x' + hex.slice(0, 12)) << 12n) | BigInt('0x' + hex.slice(13, 16));
        ms = Number(ticks / 10000n) - 12219292800000;
      }
      if (ms !== null && Math.abs(ms) <= 8.64e15) timestamp = new Date(ms).toISOString();
    }
    return {
      valid: true,
      normalized,
      version: version >= 1 && version <= 8 ? version : null,
      variant,
      isNil: false,
      isMax: false,
      timestamp,
      ...(version < 1 || version > 8 ? { warning: `Unknown version nibble ${version}` } : {}),
    };
  },
});

export const generateSecureToken = tool({
  description:
    'Generates cryptographically secure random tokens for API keys, session IDs, secrets or nonces, as hex, base64, base64url or alphanumeric strings of a chosen byte length.',
  inputSchema: {
    type: 'object',
    properties: {
      bytes: { type: 'integer', description: 'Random bytes per token (32 bytes = 256 bits).', minimum: 8, maximum: 1024, default: 32 },
      encoding: { type: 'string', description: 'Output encoding of each token.', enum: ['hex', 'base64', 'base64url', 'alphanumeric'], default: 'base64url' },
      prefix: {
        type: 'string',
        description: 'Optional prefix added to each token, e.g. "sk_live_".',
        maxLength: 32,
        pattern: '^[A-Za-z0-9_.-]*$',
        default: '',
      },
      count: { type: 'integer', description: 'How many tokens to generate.', minimum: 1, maximum: 100, default: 1 },
    },
    additionalProperties: false,
  },
  async execute({ bytes, encoding, prefix, count }) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const tokens = [];
    for (let i = 0; i < count; i++) {
      let t;
      if (encoding === 'alphanumeric') {
        const len = Math.ceil((bytes * 8) / Math.log2(alphabet.length));
        t = Array.from({ length: len }, () => alphabet[randomInt(alphabet.length)]).join('');
      } else t = randomBytes(bytes).toString(encoding);
      tokens.push(prefix + t);
    }
    return { tokens, entropyBits: bytes * 8, encoding };
  },
});
