// @toolshed-examples/file-tools — file-handling helpers that work on names and bytes (never the disk):
// path parsing, MIME types, human-readable file sizes, file type detection by magic bytes and glob matching.
import path from 'node:path';

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

export const parseFilePath = tool({
  description:
    'Parses a file path (POSIX or Windows) into directory, file name, base name and extension, normalizes it, splits its segments, and can join or resolve it against a base directory.',
  inputSchema: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        description: 'The file path, e.g. "/var/log/../www/site/index.html" or "C:\\\\Users\\\\me\\\\report.final.pdf".',
        minLength: 1,
        maxLength: 10000,
      },
      style: {
        type: 'string',
        description: 'Path rules to use; "auto" picks Windows when the path has a drive letter or backslashes.',
        enum: ['auto', 'posix', 'windows'],
        default: 'auto',
      },
      relativeTo: {
        type: 'string',
        description: 'Optional base directory; the result includes the path resolved against it and the path relative to it.',
        maxLength: 10000,
      },
    },
    required: ['path'],
    additionalProperties: false,
  },
  async execute({ path: p, style, relativeTo }) {
    if (p.includes('\u0000')) throw new Error('The path contains a NUL character');
    const win = style === 'windows' || (style === 'auto' && (/^[A-Za-z]:/.test(p) || p.includes('\\') || p.startsWith('\\\\')));
    const lib = win ? path.win32 : path.posix;
    const parsed = lib.parse(p);
    const normalized = lib.normalize(p);
    const name = parsed.base;
    const dot = name.lastIndexOf('.');
    const out = {
      style: win ? 'windows' : 'posix',
      normalized,
      isAbsolute: lib.isAbsolute(p),
      root: parsed.root,
      directory: parsed.dir,
      fileName: name,
      baseName: parsed.name,
      extension: parsed.ext ? parsed.ext.slice(1).toLowerCase() : null,
      allExtensions: dot > 0 ? name.slice(name.indexOf('.', 1) + 1).toLowerCase() : null,
      isHidden: name.startsWith('.') && name !== '.' && name !== '..',
      segments: normalized.split(win ? /[\\/]+/ : /\/+/).filter((s) => s !== '' && !/^[A-Za-z]:$/.test(s)),
      escapesRoot: !lib.isAbsolute(p) && (normalized === '..' || normalized.startsWith('..' + lib.sep)),
    };
    if (relativeTo !== undefined) {
      const resolved = lib.resolve(relativeTo, p);
      out.resolved = resolved;
      out.relative = lib.relative(lib.resolve(relativeTo), resolved);
      out.insideBase = !out.relative.startsWith('..') && !lib.isAbsolute(out.relative);
    }
    return out;
  },
});

const MIME = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'video/mp2t',
  xml: 'application/xml',
  json: 'application/json',
  jsonld: 'application/ld+json',
  map: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  ics: 'text/calendar',
  vcf: 'text/vcard',
  rtf: 'application/rtf',
  sql: 'application/sql',
  sh: 'application/x-sh',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  java: 'text/x-java-source',
  c: 'text/x-c',
  h: 'text/x-c',
  cpp: 'text/x-c++',
  go: 'text/x-go',
  rs: 'text/x-rust',
  php: 'application/x-httpd-php',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  ico: 'image/vnd.microsoft.icon',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  heif: 'image/heif',
  psd: 'image/vnd.adobe.photoshop',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
  opus: 'audio/opus',
  mid: 'audio/midi',
  midi: 'audio/midi',
  weba: 'audio/webm',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  ogv: 'video/ogg',
  mov: 'video/quicktime',
  avi: 'video/x-msvideo',
  mkv: 'video/x-matroska',
  mpeg: 'video/mpeg',
  '3gp': 'video/3gpp',
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  zst: 'application/zstd',
  jar: 'application/java-archive',
  apk: 'application/vnd.android.package-archive',
  wasm: 'application/wasm',
  exe: 'application/vnd.microsoft.portable-executable',
  dll: 'application/vnd.microsoft.portable-executable',
  msi: 'application/x-msdownload',
  dmg: 'application/x-apple-diskimage',
  iso: 'application/x-iso9660-image',
  deb: 'application/vnd.debian.binary-package',
  rpm: 'application/x-rpm',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  eot: 'application/vnd.ms-fontobject',
  sqlite: 'application/vnd.sqlite3',
  db: 'application/vnd.sqlite3',
  parquet: 'application/vnd.apache.parquet',
  bin: 'application/octet-stream',
  eml: 'message/rfc822',
  msg: 'application/vnd.ms-outlook',
  pem: 'application/x-pem-file',
  crt: 'application/x-x509-ca-cert',
  p12: 'application/x-pkcs12',
};
const mimeCategory = (m) =>
  m.startsWith('image/')
    ? 'image'
    : m.startsWith('audio/')
      ? 'audio'
      : m.startsWith('video/')
        ? 'video'
        : m.startsWith('font/')
          ? 'font'
          : m.startsWith('text/') || /json|xml|yaml|toml|javascript|sql|x-sh|php/.test(m)
            ? 'text'
            : /zip|gzip|tar|bzip|xz|7z|rar|zstd|archive/.test(m)
              ? 'archive'
              : /pdf|word|excel|powerpoint|opendocument|officedocument|rtf|epub/.test(m)
                ? 'document'
                : 'binary';

export const lookupMimeType = tool({
  description:
    'Looks up the MIME type (Content-Type) for a file name or extension such as "report.pdf" or ".webp", or lists the file extensions for a MIME type like "image/jpeg".',
  inputSchema: {
    type: 'object',
    properties: {
      fileName: { type: 'string', description: 'A file name, path or extension, e.g. "photo.JPG", "archive.tar.gz" or "svg".', minLength: 1, maxLength: 1000 },
      mimeType: {
        type: 'string',
        description: 'Alternatively, a MIME type to find the extensions for, e.g. "application/json".',
        minLength: 3,
        maxLength: 200,
      },
    },
    additionalProperties: false,
  },
  async execute({ fileName, mimeType }) {
    if ((fileName === undefined) === (mimeType === undefined)) throw new Error('Pass exactly one of "fileName" or "mimeType"');
    if (mimeType !== undefined) {
      const m = mimeType.toLowerCase().split(';')[0].trim();
      const extensions = Object.keys(MIME).filter((e) => MIME[e] === m);
      if (!extensions.length) throw new Error(`Unknown MIME type ${JSON.stringify(mimeType)}`);
      return { mimeType: m, extensions, category: mimeCategory(m) };
    }
    const base = fileName.trim().split(/[\\/]/).pop().toLowerCase();
    const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1) : base;
    const compound = /\.tar\.(gz|bz2|xz|zst)$/.test(base) ? base.slice(base.lastIndexOf('.tar.') + 1) : null;
    const mime = MIME[ext];
    if (!mime) return { fileName, extension: ext || null, mimeType: 'application/octet-stream', known: false, category: 'binary', charset: null };
    const textual = mimeCategory(mime) === 'text';
    return {
      fileName,
      extension: compound ?? ext,
      mimeType: mime,
      known: true,
      category: mimeCategory(mime),
      charset: textual ? 'utf-8' : null,
      contentType: textual ? `${mime}; charset=utf-8` : mime,
      ...(compound ? { note: `A ${compound} file is a tar archive compressed with ${compound.split('.')[1]}` } : {}),
    };
  },
});

const SI = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

export const formatFileSize = tool({
  description:
    'Formats a number of bytes as a human-readable file size such as "1.5 MB" (decimal, 1000-based) or "1.43 MiB" (binary, 1024-based), with a chosen number of decimals.',
  inputSchema: {
    type: 'object',
    properties: {
      bytes: { type: 'number', description: 'The size in bytes.', minimum: 0 },
      standard: {
        type: 'string',
        description: '"si" for kB/MB/GB (powers of 1000) or "iec" for KiB/MiB/GiB (powers of 1024).',
        enum: ['si', 'iec'],
        default: 'si',
      },
      decimals: { type: 'integer', description: 'Maximum decimal places.', minimum: 0, maximum: 10, default: 2 },
    },
    required: ['bytes'],
    additionalProperties: false,
  },
  async execute({ bytes, standard, decimals }) {
    const base = standard === 'iec' ? 1024 : 1000;
    const units = standard === 'iec' ? IEC : SI;
    let i = bytes < 1 ? 0 : Math.min(units.length - 1, Math.floor(Math.log(bytes) / Math.log(base)));
    let value = Number((bytes / base ** i).toFixed(decimals));
    if (value >= base && i < units.length - 1) {
      i++;
      value = Number((bytes / base ** i).toFixed(decimals));
    }
    return { formatted: `${value} ${units[i]}`, value, unit: units[i], bytes };
  },
});

export const parseFileSize = tool({
  description:
    'Parses a human-readable file size such as "1.5 GB", "512KiB", "10 MB" or "2T" into an exact number of bytes, honouring decimal (kB, MB) and binary (KiB, MiB) units.',
  inputSchema: {
    type: 'object',
    properties: {
      size: { type: 'string', description: 'The size text, e.g. "1.5 GB", "300 KiB", "42 bytes".', minLength: 1, maxLength: 100 },
      binaryForAmbiguous: { type: 'boolean', description: 'Treat plain "K", "M", "G" (no "B" or "iB") as powers of 1024 instead of 1000.', default: true },
    },
    required: ['size'],
    additionalProperties: false,
  },
  async execute({ size, binaryForAmbiguous }) {
    const m = /^\s*([0-9]+(?:[.,][0-9]+)?|\.[0-9]+)\s*([a-zA-Z]*)\s*$/.exec(size);
    if (!m) throw new Error(`Cannot parse file size ${JSON.stringify(size)}: expected a number followed by a unit such as "1.5 GB" or "512 KiB"`);
    const n = Number(m[1].replace(',', '.'));
    const unit = m[2];
    const u = unit.toLowerCase();
    const prefixes = { '': 0, k: 1, m: 2, g: 3, t: 4, p: 5, e: 6 };
    let multiplier;
    let interpreted;
    if (u === '' || u === 'b' || u === 'byte' || u === 'bytes') {
      multiplier = 1;
      interpreted = 'B';
    } else if (/^[kmgtpe]ib$/.test(u)) {
      multiplier = 1024 ** prefixes[u[0]];
      interpreted = IEC[prefixes[u[0]]];
    } else if (/^[kmgtpe]b$/.test(u) || /^(kilo|mega|giga|tera|peta|exa)bytes?$/.test(u)) {
      const p = prefixes[u[0]];
      multiplier = 1000 ** p;
      interpreted = SI[p];
    } else if (/^[kmgtpe]$/.test(u)) {
      const p = prefixes[u];
      multiplier = (binaryForAmbiguous ? 1024 : 1000) ** p;
      interpreted = (binaryForAmbiguous ? IEC : SI)[p];
    } else throw new Error(`Unknown size unit ${JSON.stringify(unit)}; use B, kB, MB, GB, TB, KiB, MiB, GiB, TiB (or K/M/G)`);
    const bytes = Math.round(n * multiplier);
    if (!Number.isSafeInteger(bytes)) throw new Error('The size is too large to represent exactly in bytes');
    return { bytes, input: size, interpretedUnit: interpreted, multiplier };
  },
});

const SIGNATURES = [
  { hex: '89504e470d0a1a0a', mime: 'image/png', ext: 'png', description: 'PNG image' },
  { hex: 'ffd8ff', mime: 'image/jpeg', ext: 'jpg', description: 'JPEG image' },
  { ascii: 'GIF87a', mime: 'image/gif', ext: 'gif', description: 'GIF image' },
  { ascii: 'GIF89a', mime: 'image/gif', ext: 'gif', description: 'GIF image' },
  { ascii: 'RIFF', at8: 'WEBP', mime: 'image/webp', ext: 'webp', description: 'WebP image' },
  { ascii: 'RIFF', at8: 'WAVE', mime: 'audio/wav', ext: 'wav', description: 'WAV audio' },
  { ascii: 'RIFF', at8: 'AVI ', mime: 'video/x-msvideo', ext: 'avi', description: 'AVI video' },
  { ascii: 'BM', mime: 'image/bmp', ext: 'bmp', description: 'BMP image', minLength: 26 },
  { hex: '49492a00', mime: 'image/tiff', ext: 'tif', description: 'TIFF image (little-endian)' },
  { hex: '4d4d002a', mime: 'image/tiff', ext: 'tif', description: 'TIFF image (big-endian)' },
  { hex: '00000100', mime: 'image/vnd.microsoft.icon', ext: 'ico', description: 'Windows icon' },
  { ascii: '8BPS', mime: 'image/vnd.adobe.photoshop', ext: 'psd', description: 'Photoshop document' },
  { ascii: '%PDF-', mime: 'application/pdf', ext: 'pdf', description: 'PDF document' },
  { hex: '504b0304', mime: 'application/zip', ext: 'zip', description: 'ZIP archive (also DOCX/XLSX/PPTX/JAR/EPUB containers)' },
  { hex: '504b0506', mime: 'application/zip', ext: 'zip', description: 'Empty ZIP archive' },
  { hex: '1f8b', mime: 'application/gzip', ext: 'gz', description: 'gzip compressed data' },
  { ascii: 'BZh', mime: 'application/x-bzip2', ext: 'bz2', description: 'bzip2 compressed data' },
  { hex: 'fd377a585a00', mime: 'application/x-xz', ext: 'xz', description: 'XZ compressed data' },
  { hex: '28b52ffd', mime: 'application/zstd', ext: 'zst', description: 'Zstandard compressed data' },
  { hex: '377abcaf271c', mime: 'application/x-7z-compressed', ext: '7z', description: '7-Zip archive' },
  { ascii: 'Rar!\u001a\u0007', mime: 'application/vnd.rar', ext: 'rar', description: 'RAR archive' },
  { ascii: 'ustar', offset: 257, mime: 'application/x-tar', ext: 'tar', description: 'tar archive' },
  { ascii: 'ID3', mime: 'audio/mpeg', ext: 'mp3', description: 'MP3 audio with ID3 tag' },
  { hex: 'fffb', mime: 'audio/mpeg', ext: 'mp3', description: 'MP3 audio frame' },
  { ascii: 'OggS', mime: 'audio/ogg', ext: 'ogg', description: 'Ogg container' },
  { ascii: 'fLaC', mime: 'audio/flac', ext: 'flac', description: 'FLAC audio' },
  { ascii: 'MThd', mime: 'audio/midi', ext: 'mid', description: 'MIDI audio' },
  { hex: '1a45dfa3', mime: 'video/webm', ext: 'webm', description: 'Matroska/WebM video' },
  { ascii: 'ftyp', offset: 4, mime: 'video/mp4', ext: 'mp4', description: 'ISO media (MP4/MOV/HEIC family)' },
  { ascii: 'wOFF', mime: 'font/woff', ext: 'woff', description: 'WOFF font' },
  { ascii: 'wOF2', mime: 'font/woff2', ext: 'woff2', description: 'WOFF2 font' },
  { hex: '0001000000', mime: 'font/ttf', ext: 'ttf', description: 'TrueType font' },
  { ascii: 'OTTO', mime: 'font/otf', ext: 'otf', description: 'OpenType font' },
  { hex: '7f454c46', mime: 'application/x-elf', ext: 'elf', description: 'ELF executable (Linux)' },
  { ascii: 'MZ', mime: 'application/vnd.microsoft.portable-executable', ext: 'exe', description: 'Windows executable (PE/DOS)' },
  { hex: 'cffaedfe', mime: 'application/x-mach-binary', ext: 'macho', description: 'Mach-O executable (64-bit)' },
  { hex: 'cafebabe', mime: 'application/java-vm', ext: 'class', description: 'Java class file or Mach-O universal binary' },
  { hex: '0061736d', mime: 'application/wasm', ext: 'wasm', description: 'WebAssembly module' },
  { ascii: 'SQLite format 3\u0000', mime: 'application/vnd.sqlite3', ext: 'sqlite', description: 'SQLite 3 database' },
  { ascii: 'PAR1', mime: 'application/vnd.apache.parquet', ext: 'parquet', description: 'Apache Parquet file' },
  { hex: 'd0cf11e0a1b11ae1', mime: 'application/x-ole-storage', ext: 'doc', description: 'Microsoft Office 97-2003 (OLE) document' },
  { ascii: '{\\rtf', mime: 'application/rtf', ext: 'rtf', description: 'RTF document' },
  { ascii: '-----BEGIN ', mime: 'application/x-pem-file', ext: 'pem', description: 'PEM encoded key or certificate' },
];

export const detectFileType = tool({
  description:
    'Detects the real file type of base64-encoded file content from its magic bytes (PNG, JPEG, PDF, ZIP, GZIP, MP3, MP4, EXE, SQLite and more), or recognises text formats like JSON, XML, HTML and CSV.',
  inputSchema: {
    type: 'object',
    properties: {
      content: {
        type: 'string',
        description: 'Base64 of the file content (the first few hundred bytes are enough); a data: URL also works.',
        minLength: 4,
        maxLength: 10000000,
      },
      fileName: { type: 'string', description: 'Optional file name, to check whether its extension matches the detected type.', maxLength: 1000 },
    },
    required: ['content'],
    additionalProperties: false,
  },
  async execute({ content, fileName }) {
    let s = content
      .trim()
      .replace(/^data:[^,]*;base64,/i, '')
      .replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(s)) throw new Error('"content" must be Base64-encoded bytes');
    s = s.replace(/-/g, '+').replace(/_/g, '/');
    const b = Buffer.from(s, 'base64');
    if (b.length === 0) throw new Error('"content" decodes to zero bytes');
    let hit = null;
    for (const sig of SIGNATURES) {
      const off = sig.offset ?? 0;
      const magic = sig.hex ? Buffer.from(sig.hex, 'hex') : Buffer.from(sig.ascii, 'latin1');
      if (b.length < off + magic.length || (sig.minLength && b.length < sig.minLength)) continue;
      if (!b.subarray(off, off + magic.length).equals(magic)) continue;
      if (sig.at8 && b.toString('latin1', 8, 12) !== sig.at8) continue;
      hit = { mimeType: sig.mime, extension: sig.ext, description: sig.description, method: 'magic bytes' };
      break;
    }
    if (hit && hit.extension === 'mp4') {
      const brand = b.toString('latin1', 8, 12);
      if (/^qt/.test(brand)) Object.assign(hit, { mimeType: 'video/quicktime', extension: 'mov', description: 'QuickTime movie' });
      else if (/^(heic|heix|mif1|msf1)/.test(brand)) Object.assign(hit, { mimeType: 'image/heic', extension: 'heic', description: 'HEIC image' });
      else if (/^avif/.test(brand)) Object.assign(hit, { mimeType: 'image/avif', extension: 'avif', description: 'AVIF image' });
      else if (/^M4A/.test(brand)) Object.assign(hit, { mimeType: 'audio/mp4', extension: 'm4a', description: 'MPEG-4 audio' });
    }
    if (hit && hit.extension === 'zip') {
      const head = b.toString('latin1', 0, Math.min(b.length, 2000));
      if (head.includes('word/')) Object.assign(hit, { mimeType: MIME.docx, extension: 'docx', description: 'Word document (DOCX)' });
      else if (head.includes('xl/')) Object.assign(hit, { mimeType: MIME.xlsx, extension: 'xlsx', description: 'Excel workbook (XLSX)' });
      else if (head.includes('ppt/')) Object.assign(hit, { mimeType: MIME.pptx, extension: 'pptx', description: 'PowerPoint presentation (PPTX)' });
      else if (head.includes('mimetypeapplication/epub+zip')) Object.assign(hit, { mimeType: MIME.epub, extension: 'epub', description: 'EPUB e-book' });
      else if (head.includes('META-INF/MANIFEST.MF')) Object.assign(hit, { mimeType: MIME.jar, extension: 'jar', description: 'Java archive (JAR)' });
    }
    let isText = false;
    if (!hit) {
      let text = null;
      let bom = null;
      if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
        bom = 'UTF-8';
        text = b.subarray(3).toString('utf8');
      } else if (b[0] === 0xff && b[1] === 0xfe) {
        bom = 'UTF-16LE';
        text = b.subarray(2).toString('utf16le');
      } else {
        try {
          text = new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, Math.min(b.length, 65536)));
        } catch {
          // maybe cut inside a multi-byte character at the end
          try {
            text = new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, Math.min(b.length, 65536) - 3));
          } catch {
            text = null;
          }
        }
      }
      const control = text === null ? 1 : (text.match(/[\u0000-\u0008\u000e-\u001f]/g) ?? []).length / Math.max(1, text.length);
      if (text !== null && control < 0.01) {
        isText = true;
        const t = text.trimStart();
        let kind = { mimeType: 'text/plain', extension: 'txt', description: 'Plain text' };
        if (/^[{[]/.test(t)) {
          try {
            JSON.parse(text);
            kind = { mimeType: 'application/json', extension: 'json', description: 'JSON document' };
          } catch {
            if (/^\{"/.test(t) && t.split('\n').every((l) => !l.trim() || /^\{.*\}\s*$/.test(l.trim())))
              kind = { mimeType: 'application/x-ndjson', extension: 'jsonl', description: 'JSON Lines' };
          }
        }
        if (kind.extension === 'txt') {
          if (/^<!doctype html|^<html[\s>]/i.test(t)) kind = { mimeType: 'text/html', extension: 'html', description: 'HTML document' };
          else if (/^<svg[\s>]|^<\?xml[^>]*>\s*(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(t))
            kind = { mimeType: 'image/svg+xml', extension: 'svg', description: 'SVG image' };
          else if (/^<\?xml/.test(t)) kind = { mimeType: 'application/xml', extension: 'xml', description: 'XML document' };
          else if (/^#!/.test(t)) kind = { mimeType: 'text/x-script', extension: 'sh', description: `Script (${t.split('\n')[0].slice(2).trim()})` };
          else if (/^%YAML|^---\s*\n/.test(t)) kind = { mimeType: 'application/yaml', extension: 'yaml', description: 'YAML document' };
          else {
            const lines = t.split(/\r?\n/).filter(Boolean).slice(0, 20);
            const commas = lines.map((l) => (l.match(/,/g) ?? []).length);
            if (lines.length >= 2 && commas[0] > 0 && commas.every((c) => c === commas[0]))
              kind = { mimeType: 'text/csv', extension: 'csv', description: 'CSV data' };
          }
        }
        hit = { ...kind, method: 'text analysis', encoding: bom ?? 'UTF-8', bom: bom !== null };
      }
    }
    if (!hit) hit = { mimeType: 'application/octet-stream', extension: null, description: 'Unknown binary data', method: 'none' };
    const out = { ...hit, isText, bytesExamined: b.length };
    if (fileName !== undefined) {
      const ext = fileName.toLowerCase().includes('.') ? fileName.toLowerCase().split('.').pop() : '';
      const claimed = MIME[ext] ?? null;
      out.fileNameExtension = ext || null;
      out.extensionMatches =
        hit.extension === null
          ? null
          : ext === hit.extension ||
            (claimed !== null && claimed === hit.mimeType) ||
            (hit.extension === 'jpg' && ext === 'jpeg') ||
            (hit.extension === 'txt' && claimed?.startsWith('text/'));
    }
    return out;
  },
});

function expandBraces(glob, out = [], depth = 0) {
  if (out.length > 1000 || depth > 20) throw new Error('Glob pattern expands to too many alternatives');
  let level = 0;
  let open = -1;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') {
      if (level++ === 0) open = i;
    } else if (c === '}' && level > 0 && --level === 0) {
      const body = glob.slice(open + 1, i);
      const parts = [];
      let l = 0;
      let last = 0;
      for (let k = 0; k < body.length; k++) {
        if (body[k] === '\\') {
          k++;
          continue;
        }
        if (body[k] === '{') l++;
        else if (body[k] === '}') l--;
        else if (body[k] === ',' && l === 0) {
          parts.push(body.slice(last, k));
          last = k + 1;
        }
      }
      parts.push(body.slice(last));
      if (parts.length === 1) continue; // "{x}" is literal
      for (const part of parts) expandBraces(glob.slice(0, open) + part + glob.slice(i + 1), out, depth + 1);
      return out;
    }
  }
  if (level > 0) throw new Error(`Unbalanced "{" in glob pattern ${JSON.stringify(glob)}`);
  out.push(glob);
  return out;
}

function segmentToRegExp(seg, dot) {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === '*') {
      re += '[^/]*';
      while (seg[i + 1] === '*') i++;
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end === -1) {
        re += '\\[';
        continue;
      }
      let body = seg.slice(i + 1, end);
      if (body[0] === '!' || body[0] === '^') body = '^' + body.slice(1);
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '\\' && i + 1 < seg.length) {
      re += seg[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  // unless "dot" is set, wildcards at the start of a name never match a leading "."
  return !dot && /^[*?[]/.test(seg) ? `(?!\\.)${re}` : re;
}

function globToRegExp(glob, { dot, caseSensitive }) {
  const anySeg = dot ? '[^/]+' : '(?!\\.)[^/]+';
  const segs = glob.split('/');
  let re = '';
  segs.forEach((seg, k) => {
    const last = k === segs.length - 1;
    if (seg === '**') {
      re += last ? `${anySeg}(?:/${anySeg})*` : `(?:${anySeg}/)*`;
    } else {
      re += segmentToRegExp(seg, dot) + (last ? '' : '/');
    }
  });
  return new RegExp(`^${re}$`, caseSensitive ? '' : 'i');
}

export const matchGlob = tool({
  description:
    'Tests file paths against glob patterns like "src/**/*.ts", "*.{jpg,png}" or "!**/node_modules/**" (as in .gitignore or build tools) and returns which paths match.',
  inputSchema: {
    type: 'object',
    properties: {
      patterns: {
        type: 'array',
        description: 'Glob patterns; a leading "!" excludes. Supports *, **, ?, [abc] and {a,b}.',
        items: { type: 'string', description: 'A glob pattern.', minLength: 1 },
        minItems: 1,
        maxItems: 100,
      },
      paths: {
        type: 'array',
        description: 'File paths to test (forward slashes; backslashes are converted).',
        items: { type: 'string', description: 'A file path.' },
        minItems: 1,
        maxItems: 100000,
      },
      dot: { type: 'boolean', description: 'Let * and ** match names that start with a dot.', default: false },
      caseSensitive: { type: 'boolean', description: 'Match case-sensitively.', default: true },
      matchBase: {
        type: 'boolean',
        description: 'Match patterns without a slash against the file name only (like "*.js" matching "a/b/c.js").',
        default: true,
      },
    },
    required: ['patterns', 'paths'],
    additionalProperties: false,
  },
  async execute({ patterns, paths, dot, caseSensitive, matchBase }) {
    const compiled = patterns.map((p) => {
      const negated = p.startsWith('!');
      const body = (negated ? p.slice(1) : p).replace(/^\.\//, '');
      if (!body) throw new Error(`Empty glob pattern ${JSON.stringify(p)}`);
      const res = expandBraces(body.replace(/\/$/, '/**')).map((g) => globToRegExp(g, { dot, caseSensitive }));
      return { pattern: p, negated, baseOnly: matchBase && !body.includes('/') && !body.includes('**'), re: { test: (x) => res.some((r) => r.test(x)) } };
    });
    if (compiled.every((c) => c.negated))
      compiled.unshift({ pattern: '**', negated: false, baseOnly: false, re: globToRegExp('**', { dot: true, caseSensitive }) });
    const matched = [];
    const unmatched = [];
    for (const raw of paths) {
      const p = raw.replace(/\\/g, '/').replace(/^\.\//, '');
      const name = p.split('/').pop();
      let ok = false;
      let by = null;
      for (const c of compiled) {
        const hit = c.re.test(c.baseOnly ? name : p);
        if (hit && !c.negated) {
          ok = true;
          by = c.pattern;
        } else if (hit && c.negated) {
          ok = false;
          by = c.pattern;
        }
      }
      (ok ? matched : unmatched).push(ok ? { path: raw, pattern: by } : raw);
    }
    return { matchedCount: matched.length, matched, unmatched };
  },
});
