// @toolshed-examples/http-tools — helpers for working with HTTP APIs: URL parsing and building, query
// strings, HTTP status codes, Base64 and JWT decoding. Plain ESM, no dependencies.

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

function toUrl(input, base) {
  try {
    return base !== undefined ? new URL(input, base) : new URL(input);
  } catch {
    throw new Error(
      `Invalid URL ${JSON.stringify(input)}${base !== undefined ? ` (base ${JSON.stringify(base)})` : ''}: expected an absolute URL such as "https://example.com/path?x=1"${base === undefined ? ', or pass "base" for a relative one' : ''}`,
    );
  }
}

function paramsToObject(searchParams) {
  const obj = {};
  for (const [k, v] of searchParams) {
    if (Object.hasOwn(obj, k)) obj[k] = [].concat(obj[k], v);
    else obj[k] = v;
  }
  return obj;
}

const DEFAULT_PORTS = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443, 'ftp:': 21 };

export const parseUrl = tool({
  description:
    'Parses a URL into its parts: protocol, host, hostname, port, path segments, query parameters (as an object), fragment and origin; resolves relative URLs against a base URL.',
  inputSchema: {
    type: 'object',
    properties: {
      url: {
        type: 'string',
        description: 'The URL to parse, e.g. "https://user@api.example.com:8443/v1/items?id=3&id=4#top".',
        minLength: 1,
        maxLength: 20000,
      },
      base: { type: 'string', description: 'Optional base URL to resolve a relative "url" against.', maxLength: 20000 },
    },
    required: ['url'],
    additionalProperties: false,
  },
  async execute({ url, base }) {
    const u = toUrl(url.trim(), base);
    const hostname = u.hostname.replace(/^\[|\]$/g, '');
    return {
      href: u.href,
      protocol: u.protocol.replace(/:$/, ''),
      origin: u.origin === 'null' ? null : u.origin,
      username: u.username ? decodeURIComponent(u.username) : null,
      hasPassword: u.password !== '',
      host: u.host,
      hostname,
      port: u.port ? Number(u.port) : (DEFAULT_PORTS[u.protocol] ?? null),
      isDefaultPort: !u.port,
      pathname: u.pathname,
      pathSegments: u.pathname
        .split('/')
        .filter(Boolean)
        .map((s) => {
          try {
            return decodeURIComponent(s);
          } catch {
            return s;
          }
        }),
      search: u.search,
      query: paramsToObject(u.searchParams),
      hash: u.hash ? u.hash.slice(1) : null,
      isIpAddress: /^(\d{1,3}\.){3}\d{1,3}$/.test(hostname) || hostname.includes(':'),
      tld: /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(hostname) && !/^(\d{1,3}\.){3}\d{1,3}$/.test(hostname) ? hostname.split('.').pop() : null,
    };
  },
});

export const buildUrl = tool({
  description:
    'Builds a correctly encoded URL from a base URL, extra path segments, query parameters (arrays become repeated keys) and a fragment, e.g. for calling a REST API endpoint.',
  inputSchema: {
    type: 'object',
    properties: {
      base: { type: 'string', description: 'Base URL, e.g. "https://api.example.com/v1".', minLength: 1, maxLength: 20000 },
      path: {
        type: 'array',
        description: 'Path segments appended to the base path; each is percent-encoded, e.g. ["users", "jane doe", "repos"].',
        items: { description: 'One path segment (a string or number).' },
        maxItems: 100,
      },
      query: {
        type: 'object',
        description: 'Query parameters. Arrays become repeated keys; null values are skipped; booleans and numbers are stringified.',
        additionalProperties: { description: 'A parameter value: string, number, boolean, null, or an array of those.' },
      },
      hash: { type: 'string', description: 'Optional fragment (without "#").', maxLength: 2000 },
      replaceQuery: { type: 'boolean', description: 'Drop any query parameters already in the base URL instead of keeping them.', default: false },
    },
    required: ['base'],
    additionalProperties: false,
  },
  async execute({ base, path, query, hash, replaceQuery }) {
    const u = toUrl(base.trim());
    if (path?.length) {
      const badSeg = path.findIndex((s) => typeof s !== 'string' && typeof s !== 'number');
      if (badSeg !== -1) throw new Error(`"path[${badSeg}]" must be a string or number`);
      const segs = path.map((s) => String(s));
      if (segs.some((s) => s === '' || s === '.' || s === '..')) throw new Error('Path segments must not be empty, "." or ".."');
      u.pathname = u.pathname.replace(/\/+$/, '') + '/' + segs.map((s) => encodeURIComponent(s)).join('/');
    }
    if (replaceQuery) u.search = '';
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === null) continue;
      if (typeof v === 'object' && !Array.isArray(v)) throw new Error(`Query parameter "${k}" is an object; use a string, number, boolean, null or an array`);
      if (Array.isArray(v)) {
        u.searchParams.delete(k);
        for (const item of v) {
          if (item !== null && typeof item === 'object') throw new Error(`Query parameter "${k}" contains a nested object; only scalars are allowed`);
          if (item !== null) u.searchParams.append(k, String(item));
        }
      } else u.searchParams.set(k, String(v));
    }
    if (hash !== undefined) u.hash = hash;
    return { url: u.href, length: u.href.length };
  },
});

function setNested(obj, keys, value) {
  let cur = obj;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new Error(`Refusing to set dangerous key "${key}"`);
    const last = i === keys.length - 1;
    if (key === '') {
      if (!Array.isArray(cur)) throw new Error(`Conflicting query keys: "[]" used on a non-array`);
      if (last) cur.push(value);
      else {
        const next = {};
        cur.push(next);
        cur = next;
      }
      continue;
    }
    if (last) {
      if (Object.hasOwn(cur, key)) cur[key] = [].concat(cur[key], value);
      else cur[key] = value;
    } else {
      if (!Object.hasOwn(cur, key) || typeof cur[key] !== 'object' || cur[key] === null) cur[key] = keys[i + 1] === '' ? [] : {};
      cur = cur[key];
    }
  }
}

export const parseQueryString = tool({
  description:
    'Parses a URL query string ("a=1&b=two&b=three") into a JSON object, decoding percent-escapes and "+" spaces; repeated keys become arrays and optional bracket notation (user[name]=x) becomes nested objects.',
  inputSchema: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        description: 'The query string, with or without a leading "?", or a whole URL (everything after "?" is used).',
        maxLength: 100000,
      },
      nested: { type: 'boolean', description: 'Interpret bracket keys like "filter[status]=open" and "ids[]=1" as nested objects and arrays.', default: false },
      parseValues: { type: 'boolean', description: 'Convert "true"/"false", "null" and numeric strings to JSON booleans, null and numbers.', default: false },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async execute({ query, nested, parseValues }) {
    let q = query.trim();
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(q) || q.includes('?')) q = q.slice(q.indexOf('?') + 1);
    q = q.replace(/#.*$/, '');
    const convert = (v) => {
      if (!parseValues) return v;
      if (v === 'true') return true;
      if (v === 'false') return false;
      if (v === 'null') return null;
      if (/^-?(0|[1-9]\d{0,14})(\.\d+)?$/.test(v)) return Number(v);
      return v;
    };
    const entries = [];
    for (const [k, v] of new URLSearchParams(q)) entries.push([k, v]);
    const params = {};
    for (const [k, v] of entries) {
      const value = convert(v);
      if (nested) {
        const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(k);
        const keys = m ? [m[1], ...[...m[2].matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1])] : [k];
        setNested(params, keys, value);
      } else if (Object.hasOwn(params, k)) params[k] = [].concat(params[k], value);
      else params[k] = value;
    }
    return { params, entries, count: entries.length };
  },
});

// ----------------------------------------------------------------------------- HTTP status codes
const STATUS = {
  100: ['Continue', 'The server received the request headers; the client should send the body.', 'RFC 9110'],
  101: ['Switching Protocols', 'The server is switching to the protocol named in the Upgrade header (e.g. WebSocket).', 'RFC 9110'],
  102: ['Processing', 'WebDAV: the server is processing the request but has no response yet.', 'RFC 2518'],
  103: ['Early Hints', 'Preliminary headers (such as Link preload hints) sent before the final response.', 'RFC 8297'],
  200: ['OK', 'The request succeeded.', 'RFC 9110'],
  201: ['Created', 'The request succeeded and a new resource was created (see the Location header).', 'RFC 9110'],
  202: ['Accepted', 'The request was accepted for processing, which has not finished yet.', 'RFC 9110'],
  203: ['Non-Authoritative Information', 'The returned metadata comes from a transforming proxy, not the origin server.', 'RFC 9110'],
  204: ['No Content', 'The request succeeded and there is no body to return.', 'RFC 9110'],
  205: ['Reset Content', 'The request succeeded; the client should reset the document view (e.g. clear a form).', 'RFC 9110'],
  206: ['Partial Content', 'Only the requested byte range of the resource is returned (Range request).', 'RFC 9110'],
  207: ['Multi-Status', 'WebDAV: the body holds status codes for several independent operations.', 'RFC 4918'],
  208: ['Already Reported', 'WebDAV: members of a binding were already listed earlier in the response.', 'RFC 5842'],
  226: ['IM Used', 'The response is the result of instance manipulations applied to the resource.', 'RFC 3229'],
  300: ['Multiple Choices', 'The resource has several representations; the client should pick one.', 'RFC 9110'],
  301: ['Moved Permanently', 'The resource has a new permanent URL (Location header); clients may change POST to GET.', 'RFC 9110'],
  302: ['Found', 'The resource is temporarily at another URL (Location header).', 'RFC 9110'],
  303: ['See Other', 'Fetch the result with GET at the URL in the Location header (e.g. after a POST).', 'RFC 9110'],
  304: ['Not Modified', 'The cached copy is still valid (conditional request); no body is sent.', 'RFC 9110'],
  305: ['Use Proxy', 'Deprecated: the resource must be accessed through a proxy.', 'RFC 9110'],
  307: ['Temporary Redirect', 'The resource is temporarily at another URL; repeat the request with the same method and body.', 'RFC 9110'],
  308: ['Permanent Redirect', 'The resource has a new permanent URL; repeat the request with the same method and body.', 'RFC 9110'],
  400: ['Bad Request', 'The server cannot process the request because it is malformed (bad syntax, invalid parameters).', 'RFC 9110'],
  401: ['Unauthorized', 'Authentication is required or failed; send valid credentials (see WWW-Authenticate).', 'RFC 9110'],
  402: ['Payment Required', 'Reserved; some APIs use it when payment or a paid plan is needed.', 'RFC 9110'],
  403: ['Forbidden', 'The server understood the request but refuses it; the credentials lack permission.', 'RFC 9110'],
  404: ['Not Found', 'The server has no resource at this URL.', 'RFC 9110'],
  405: ['Method Not Allowed', 'The HTTP method is not supported for this resource (see the Allow header).', 'RFC 9110'],
  406: ['Not Acceptable', 'No representation matches the Accept headers of the request.', 'RFC 9110'],
  407: ['Proxy Authentication Required', 'The client must authenticate with the proxy first.', 'RFC 9110'],
  408: ['Request Timeout', 'The server timed out waiting for the request.', 'RFC 9110'],
  409: ['Conflict', 'The request conflicts with the current state of the resource (e.g. an edit conflict or duplicate).', 'RFC 9110'],
  410: ['Gone', 'The resource was permanently removed and will not come back.', 'RFC 9110'],
  411: ['Length Required', 'The request must include a Content-Length header.', 'RFC 9110'],
  412: ['Precondition Failed', 'A precondition header (If-Match, If-Unmodified-Since) was not met.', 'RFC 9110'],
  413: ['Content Too Large', 'The request body is larger than the server accepts.', 'RFC 9110'],
  414: ['URI Too Long', 'The request URL is longer than the server accepts.', 'RFC 9110'],
  415: ['Unsupported Media Type', 'The request body format (Content-Type) is not supported.', 'RFC 9110'],
  416: ['Range Not Satisfiable', 'The requested byte range cannot be served.', 'RFC 9110'],
  417: ['Expectation Failed', 'The Expect request header cannot be met.', 'RFC 9110'],
  418: ["I'm a teapot", 'An April Fools joke from HTCPCP; sometimes used for requests the server refuses to brew.', 'RFC 2324'],
  421: ['Misdirected Request', 'The request went to a server that cannot produce a response for this host.', 'RFC 9110'],
  422: ['Unprocessable Content', 'The request is well-formed but semantically invalid (e.g. validation errors).', 'RFC 9110'],
  423: ['Locked', 'WebDAV: the resource is locked.', 'RFC 4918'],
  424: ['Failed Dependency', 'WebDAV: the request failed because a request it depended on failed.', 'RFC 4918'],
  425: ['Too Early', 'The server will not process a request that might be replayed (TLS early data).', 'RFC 8470'],
  426: ['Upgrade Required', 'The client must switch to another protocol (see the Upgrade header).', 'RFC 9110'],
  428: ['Precondition Required', 'The server requires a conditional request (e.g. If-Match) to avoid lost updates.', 'RFC 6585'],
  429: ['Too Many Requests', 'Rate limit exceeded; wait before retrying (see the Retry-After header).', 'RFC 6585'],
  431: ['Request Header Fields Too Large', 'The request headers are too large.', 'RFC 6585'],
  451: ['Unavailable For Legal Reasons', 'The resource is unavailable for legal reasons (e.g. censorship or a court order).', 'RFC 7725'],
  500: ['Internal Server Error', 'The server hit an unexpected error.', 'RFC 9110'],
  501: ['Not Implemented', 'The server does not support the functionality needed for the request.', 'RFC 9110'],
  502: ['Bad Gateway', 'A gateway or proxy got an invalid response from the upstream server.', 'RFC 9110'],
  503: ['Service Unavailable', 'The server is temporarily overloaded or down for maintenance (see Retry-After).', 'RFC 9110'],
  504: ['Gateway Timeout', 'A gateway or proxy did not get a timely response from the upstream server.', 'RFC 9110'],
  505: ['HTTP Version Not Supported', 'The HTTP version of the request is not supported.', 'RFC 9110'],
  506: ['Variant Also Negotiates', 'Server configuration error in transparent content negotiation.', 'RFC 2295'],
  507: ['Insufficient Storage', 'WebDAV: the server cannot store the representation.', 'RFC 4918'],
  508: ['Loop Detected', 'WebDAV: the server detected an infinite loop.', 'RFC 5842'],
  510: ['Not Extended', 'Further extensions to the request are required.', 'RFC 2774'],
  511: ['Network Authentication Required', 'The client must authenticate to gain network access (captive portal).', 'RFC 6585'],
};
const CLASSES = { 1: 'informational', 2: 'success', 3: 'redirection', 4: 'client error', 5: 'server error' };
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

export const lookupHttpStatus = tool({
  description:
    'Looks up an HTTP status code (e.g. 404, 429, 503) and returns its name, class, meaning, whether retrying makes sense, and the defining RFC; can also find a code by name.',
  inputSchema: {
    type: 'object',
    properties: {
      code: { type: 'integer', description: 'The HTTP status code, 100-599.', minimum: 100, maximum: 599 },
      name: {
        type: 'string',
        description: 'Alternatively, a status name or part of it to search for, e.g. "teapot" or "Too Many Requests".',
        minLength: 2,
        maxLength: 100,
      },
    },
    additionalProperties: false,
  },
  async execute({ code, name }) {
    if (code === undefined && name === undefined) throw new Error('Pass either "code" (e.g. 404) or "name" (e.g. "Not Found")');
    const describe = (c) => {
      const entry = STATUS[c];
      const cls = CLASSES[Math.floor(c / 100)];
      return {
        code: c,
        name: entry ? entry[0] : `Unassigned ${cls} status`,
        known: !!entry,
        class: cls,
        description: entry ? entry[1] : `Not a registered status code; treat it like ${Math.floor(c / 100)}00 (${cls}).`,
        retryable: RETRYABLE.has(c),
        isError: c >= 400,
        reference: entry ? entry[2] : null,
      };
    };
    if (code !== undefined) return describe(code);
    const needle = name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .trim();
    const matches = Object.keys(STATUS)
      .map(Number)
      .filter((c) =>
        STATUS[c][0]
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, ' ')
          .includes(needle),
      );
    if (matches.length === 0) throw new Error(`No HTTP status name contains ${JSON.stringify(name)}`);
    return { ...describe(matches[0]), otherMatches: matches.slice(1).map((c) => ({ code: c, name: STATUS[c][0] })) };
  },
});

// ----------------------------------------------------------------------------- Base64
export const encodeBase64 = tool({
  description: 'Encodes text (UTF-8) or hex bytes to Base64 or URL-safe Base64 (base64url), e.g. for HTTP Basic auth headers, data URLs or API payloads.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The data to encode.', maxLength: 1000000 },
      inputEncoding: { type: 'string', description: 'How to read "text": UTF-8 text or hex bytes.', enum: ['utf8', 'hex'], default: 'utf8' },
      urlSafe: { type: 'boolean', description: 'Use the URL-safe alphabet (- and _) without padding.', default: false },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, inputEncoding, urlSafe }) {
    if (inputEncoding === 'hex' && !/^(?:[0-9a-fA-F]{2})*$/.test(text.replace(/\s+/g, '')))
      throw new Error('"text" is not valid hex (pairs of 0-9/a-f digits)');
    const buf = Buffer.from(inputEncoding === 'hex' ? text.replace(/\s+/g, '') : text, inputEncoding);
    return { base64: buf.toString(urlSafe ? 'base64url' : 'base64'), bytes: buf.length, urlSafe };
  },
});

export const decodeBase64 = tool({
  description:
    'Decodes a Base64 or base64url string (padding optional, data: URLs accepted) back to UTF-8 text or hex bytes, and reports whether the bytes are valid UTF-8 text.',
  inputSchema: {
    type: 'object',
    properties: {
      base64: { type: 'string', description: 'The Base64 text to decode; whitespace is ignored.', maxLength: 2000000 },
      outputEncoding: { type: 'string', description: 'Return the decoded bytes as UTF-8 text or as hex.', enum: ['utf8', 'hex'], default: 'utf8' },
    },
    required: ['base64'],
    additionalProperties: false,
  },
  async execute({ base64, outputEncoding }) {
    let s = base64.trim();
    let mimeType = null;
    const dataUrl = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(s);
    if (dataUrl) {
      mimeType = dataUrl[1] || null;
      s = s.slice(dataUrl[0].length);
    }
    s = s.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(s)) {
      const bad = /[^A-Za-z0-9+/\-_=\s]/.exec(s);
      throw new Error(`Invalid Base64: ${bad ? `unexpected character ${JSON.stringify(bad[0])}` : 'misplaced "=" padding'}`);
    }
    const body = s.replace(/=+$/, '');
    if (body.length % 4 === 1) throw new Error('Invalid Base64: the length is not possible for Base64 data (one character too many or too few)');
    const buf = Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    let validUtf8 = true;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(buf);
    } catch {
      validUtf8 = false;
    }
    return {
      text: outputEncoding === 'hex' ? buf.toString('hex') : buf.toString('utf8'),
      bytes: buf.length,
      validUtf8,
      mimeType,
    };
  },
});

// ----------------------------------------------------------------------------- JWT
function decodeSegment(seg, name) {
  if (!/^[A-Za-z0-9_-]*$/.test(seg)) throw new Error(`The JWT ${name} is not base64url encoded`);
  try {
    return JSON.parse(Buffer.from(seg, 'base64url').toString('utf8'));
  } catch {
    throw new Error(`The JWT ${name} is not valid JSON after base64url decoding`);
  }
}

export const decodeJwt = tool({
  description:
    'Decodes a JSON Web Token (JWT) without verifying it: returns the header, payload claims, issue/expiry times and whether it is expired, to debug API authentication tokens.',
  inputSchema: {
    type: 'object',
    properties: {
      token: { type: 'string', description: 'The JWT ("xxxxx.yyyyy.zzzzz"); a leading "Bearer " is ignored.', minLength: 5, maxLength: 100000 },
      now: { type: 'string', description: 'Optional ISO 8601 time to evaluate expiry against (default: the current time).', maxLength: 64 },
    },
    required: ['token'],
    additionalProperties: false,
  },
  async execute({ token, now }) {
    const t = token.trim().replace(/^Bearer\s+/i, '');
    const parts = t.split('.');
    if (parts.length !== 3 && parts.length !== 5) throw new Error(`A JWT has 3 dot-separated parts (header.payload.signature); got ${parts.length}`);
    if (parts.length === 5) throw new Error('This is an encrypted JWT (JWE, 5 parts); its payload cannot be decoded without the key');
    const header = decodeSegment(parts[0], 'header');
    const payload = decodeSegment(parts[1], 'payload');
    if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new Error('The JWT header is not a JSON object');
    let nowMs = Date.now();
    if (now !== undefined) {
      nowMs = Date.parse(now);
      if (Number.isNaN(nowMs)) throw new Error(`"now" is not a valid ISO 8601 date-time: ${JSON.stringify(now)}`);
    }
    const time = (v) => (typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000).toISOString() : null);
    const claims = payload && typeof payload === 'object' ? payload : {};
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : null;
    const nbf = typeof claims.nbf === 'number' ? claims.nbf * 1000 : null;
    return {
      header,
      payload,
      signaturePresent: parts[2].length > 0,
      algorithm: header.alg ?? null,
      unsecured: header.alg === 'none',
      issuedAt: time(claims.iat),
      notBefore: time(claims.nbf),
      expiresAt: time(claims.exp),
      expired: exp === null ? null : nowMs >= exp,
      notYetValid: nbf === null ? null : nowMs < nbf,
      secondsUntilExpiry: exp === null ? null : Math.round((exp - nowMs) / 1000),
      verified: false,
      note: 'The signature was not verified; do not trust these claims without verifying the signature with the issuer key.',
    };
  },
});
