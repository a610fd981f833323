// @toolshed-examples/color-tools — colour conversion (hex, RGB, HSL, HSV, CMYK, CSS names), WCAG contrast
// ratios, palette generation and image dimension/format reading from base64 image headers. No dependencies.

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

const NAMED = Object.fromEntries(
  (
    'aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc bisque:ffe4c4 black:000000 ' +
    'blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a burlywood:deb887 cadetblue:5f9ea0 chartreuse:7fff00 ' +
    'chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c cyan:00ffff darkblue:00008b darkcyan:008b8b ' +
    'darkgoldenrod:b8860b darkgray:a9a9a9 darkgreen:006400 darkgrey:a9a9a9 darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f ' +
    'darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f ' +
    'darkslategrey:2f4f4f darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff dimgray:696969 dimgrey:696969 ' +
    'dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ghostwhite:f8f8ff ' +
    'gold:ffd700 goldenrod:daa520 gray:808080 green:008000 greenyellow:adff2f grey:808080 honeydew:f0fff0 hotpink:ff69b4 ' +
    'indianred:cd5c5c indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd ' +
    'lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3 ' +
    'lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa lightslategray:778899 lightslategrey:778899 ' +
    'lightsteelblue:b0c4de lightyellow:ffffe0 lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 ' +
    'mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db mediumseagreen:3cb371 mediumslateblue:7b68ee ' +
    'mediumspringgreen:00fa9a mediumturquoise:48d1cc mediumvioletred:c71585 midnightblue:191970 mintcream:f5fffa mistyrose:ffe4e1 ' +
    'moccasin:ffe4b5 navajowhite:ffdead navy:000080 oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500 ' +
    'orchid:da70d6 palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093 papayawhip:ffefd5 peachpuff:ffdab9 ' +
    'peru:cd853f pink:ffc0cb plum:dda0dd powderblue:b0e0e6 purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f ' +
    'royalblue:4169e1 saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee sienna:a0522d silver:c0c0c0 ' +
    'skyblue:87ceeb slateblue:6a5acd slategray:708090 slategrey:708090 snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c ' +
    'teal:008080 thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 white:ffffff whitesmoke:f5f5f5 yellow:ffff00 ' +
    'yellowgreen:9acd32'
  )
    .split(' ')
    .map((p) => p.split(':')),
);

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const round = (v, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

function hslToRgb(h, s, l) {
  h = ((h % 360) + 360) % 360;
  s /= 100;
  l /= 100;
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
  const m = l - c / 2;
  const [r, g, b] = h < 60 ? [c, x, 0] : h < 120 ? [x, c, 0] : h < 180 ? [0, c, x] : h < 240 ? [0, x, c] : h < 300 ? [x, 0, c] : [c, 0, x];
  return [(r + m) * 255, (g + m) * 255, (b + m) * 255];
}
function hsvToRgb(h, s, v) {
  s /= 100;
  v /= 100;
  const l = v * (1 - s / 2);
  const sl = l === 0 || l === 1 ? 0 : (v - l) / Math.min(l, 1 - l);
  return hslToRgb(h, sl * 100, l * 100);
}
function rgbToHsl(r, g, b) {
  r /= 255;
  g /= 255;
  b /= 255;
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const l = (max + min) / 2;
  const d = max - min;
  let h = 0;
  let s = 0;
  if (d !== 0) {
    s = d / (1 - Math.abs(2 * l - 1));
    h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    h *= 60;
    if (h < 0) h += 360;
  }
  return [h, s * 100, l * 100];
}
function rgbToHsv(r, g, b) {
  const [h] = rgbToHsl(r, g, b);
  const max = Math.max(r, g, b) / 255;
  const min = Math.min(r, g, b) / 255;
  return [h, max === 0 ? 0 : ((max - min) / max) * 100, max * 100];
}

function parseNumber(token, max, name) {
  const t = token.trim();
  const pct = t.endsWith('%');
  const n = Number(pct ? t.slice(0, -1) : t.replace(/deg$/, ''));
  if (t === '' || !Number.isFinite(n)) throw new Error(`Invalid ${name} value ${JSON.stringify(token)}`);
  return pct ? (n / 100) * max : n;
}

/** Parses any CSS colour notation into { r, g, b, a } (0-255, alpha 0-1). */
function parseColor(input) {
  const s = input.trim().toLowerCase();
  let m;
  if (NAMED[s]) return parseColor('#' + NAMED[s]);
  if (s === 'transparent') return { r: 0, g: 0, b: 0, a: 0 };
  if ((m = /^#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(s))) {
    let hex = m[1];
    if (hex.length <= 4) hex = [...hex].map((c) => c + c).join('');
    return {
      r: parseInt(hex.slice(0, 2), 16),
      g: parseInt(hex.slice(2, 4), 16),
      b: parseInt(hex.slice(4, 6), 16),
      a: hex.length === 8 ? round(parseInt(hex.slice(6, 8), 16) / 255, 3) : 1,
    };
  }
  if ((m = /^(rgba?|hsla?|hsv|hsb)\((.*)\)$/.exec(s))) {
    const fn = m[1];
    const args = m[2].includes(',')
      ? m[2].split(',')
      : m[2]
          .replace(/\s*\/\s*/, ' / ')
          .split(/\s+/)
          .filter((x) => x !== '/');
    if (args.length < 3 || args.length > 4) throw new Error(`${fn}() needs 3 components plus optional alpha; got ${JSON.stringify(input)}`);
    const a = args[3] !== undefined ? clamp(parseNumber(args[3], 1, 'alpha'), 0, 1) : 1;
    if (fn.startsWith('rgb')) {
      const [r, g, b] = args.slice(0, 3).map((x) => clamp(parseNumber(x, 255, 'rgb'), 0, 255));
      return { r: Math.round(r), g: Math.round(g), b: Math.round(b), a };
    }
    const h = parseNumber(args[0], 360, 'hue');
    const p2 = clamp(parseNumber(args[1].includes('%') ? args[1] : args[1] + '%', 100, 'saturation'), 0, 100);
    const p3 = clamp(parseNumber(args[2].includes('%') ? args[2] : args[2] + '%', 100, 'lightness'), 0, 100);
    const [r, g, b] = fn.startsWith('hsl') ? hslToRgb(h, p2, p3) : hsvToRgb(h, p2, p3);
    return { r: Math.round(r), g: Math.round(g), b: Math.round(b), a };
  }
  throw new Error(`Unrecognised colour ${JSON.stringify(input)}: use hex (#1e90ff, #fff), rgb(30, 144, 255), hsl(210 100% 56%), hsv(...) or a CSS colour name`);
}

const hex2 = (n) => Math.round(n).toString(16).padStart(2, '0');
function describeColor(c) {
  const [h, s, l] = rgbToHsl(c.r, c.g, c.b);
  const [hv, sv, vv] = rgbToHsv(c.r, c.g, c.b);
  const k = 1 - Math.max(c.r, c.g, c.b) / 255;
  const cmyk =
    k === 1
      ? { c: 0, m: 0, y: 0, k: 100 }
      : {
          c: round(((1 - c.r / 255 - k) / (1 - k)) * 100),
          m: round(((1 - c.g / 255 - k) / (1 - k)) * 100),
          y: round(((1 - c.b / 255 - k) / (1 - k)) * 100),
          k: round(k * 100),
        };
  const hex = `#${hex2(c.r)}${hex2(c.g)}${hex2(c.b)}${c.a < 1 ? hex2(c.a * 255) : ''}`;
  const name = Object.keys(NAMED).find((n) => '#' + NAMED[n] === hex) ?? null;
  const alpha = c.a < 1 ? ` / ${c.a}` : '';
  return {
    hex,
    rgb: { r: c.r, g: c.g, b: c.b, a: c.a },
    hsl: { h: round(h), s: round(s), l: round(l), a: c.a },
    hsv: { h: round(hv), s: round(sv), v: round(vv) },
    cmyk,
    css: { hex, rgb: `rgb(${c.r} ${c.g} ${c.b}${alpha})`, hsl: `hsl(${round(h)} ${round(s)}% ${round(l)}%${alpha})` },
    name,
    luminance: round(relativeLuminance(c), 4),
    isLight: relativeLuminance(c) > 0.179,
  };
}

function relativeLuminance({ r, g, b }) {
  const lin = (v) => {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export const convertColor = tool({
  description:
    'Converts a colour between hex, RGB, HSL, HSV, CMYK and CSS colour names (e.g. "#1e90ff" to rgb and hsl), and reports its luminance and whether it is light or dark.',
  inputSchema: {
    type: 'object',
    properties: {
      color: {
        type: 'string',
        description: 'Colour in any CSS notation: "#1e90ff", "#fff", "rgb(30,144,255)", "hsl(210 100% 56%)", "hsv(210,88%,100%)" or "dodgerblue".',
        minLength: 1,
        maxLength: 100,
      },
    },
    required: ['color'],
    additionalProperties: false,
  },
  async execute({ color }) {
    return { input: color, ...describeColor(parseColor(color)) };
  },
});

function blend(fg, bg) {
  if (fg.a >= 1) return fg;
  return {
    r: Math.round(fg.r * fg.a + bg.r * (1 - fg.a)),
    g: Math.round(fg.g * fg.a + bg.g * (1 - fg.a)),
    b: Math.round(fg.b * fg.a + bg.b * (1 - fg.a)),
    a: 1,
  };
}

export const contrastRatio = tool({
  description:
    'Calculates the WCAG 2.x contrast ratio between a text (foreground) colour and a background colour and reports AA/AAA pass or fail for normal text, large text and UI components.',
  inputSchema: {
    type: 'object',
    properties: {
      foreground: { type: 'string', description: 'Text colour in any CSS notation, e.g. "#777777".', minLength: 1, maxLength: 100 },
      background: { type: 'string', description: 'Background colour in any CSS notation, e.g. "white".', minLength: 1, maxLength: 100 },
    },
    required: ['foreground', 'background'],
    additionalProperties: false,
  },
  async execute({ foreground, background }) {
    const bg = blend(parseColor(background), { r: 255, g: 255, b: 255, a: 1 });
    const fg = blend(parseColor(foreground), bg);
    const l1 = relativeLuminance(fg);
    const l2 = relativeLuminance(bg);
    const exact = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const ratio = Math.floor(exact * 100) / 100;
    return {
      ratio,
      ratioText: `${ratio}:1`,
      wcag: {
        aaNormalText: exact >= 4.5,
        aaLargeText: exact >= 3,
        aaaNormalText: exact >= 7,
        aaaLargeText: exact >= 4.5,
        uiComponents: exact >= 3,
      },
      foreground: describeColor(fg).hex,
      background: describeColor(bg).hex,
      suggestion:
        exact >= 4.5
          ? null
          : `Increase contrast: ${relativeLuminance(bg) > 0.179 ? 'darken the text or lighten the background' : 'lighten the text or darken the background'} to reach 4.5:1 for normal text.`,
    };
  },
});

export const generateColorPalette = tool({
  description:
    'Generates a colour palette or scheme from a base colour: complementary, analogous, triadic, tetradic, split-complementary, monochromatic, or tints and shades, as hex and RGB values.',
  inputSchema: {
    type: 'object',
    properties: {
      color: { type: 'string', description: 'Base colour in any CSS notation.', minLength: 1, maxLength: 100 },
      scheme: {
        type: 'string',
        description: 'Colour harmony to generate.',
        enum: ['complementary', 'analogous', 'triadic', 'tetradic', 'split-complementary', 'monochromatic', 'shades', 'tints'],
        default: 'complementary',
      },
      count: { type: 'integer', description: 'Number of colours for monochromatic, shades and tints schemes.', minimum: 2, maximum: 20, default: 5 },
    },
    required: ['color'],
    additionalProperties: false,
  },
  async execute({ color, scheme, count }) {
    const base = parseColor(color);
    const [h, s, l] = rgbToHsl(base.r, base.g, base.b);
    const fromHsl = (hh, ss, ll) => {
      const [r, g, b] = hslToRgb(hh, ss, ll);
      return { r: Math.round(r), g: Math.round(g), b: Math.round(b), a: 1 };
    };
    let colors;
    const rotations = {
      complementary: [0, 180],
      analogous: [-30, 0, 30],
      triadic: [0, 120, 240],
      tetradic: [0, 90, 180, 270],
      'split-complementary': [0, 150, 210],
    };
    if (rotations[scheme]) colors = rotations[scheme].map((d) => (d === 0 ? { ...base, a: 1 } : fromHsl(h + d, s, l)));
    else if (scheme === 'monochromatic') colors = Array.from({ length: count }, (_, i) => fromHsl(h, s, 10 + (80 * i) / (count - 1)));
    else if (scheme === 'shades')
      colors = Array.from({ length: count }, (_, i) => ({
        r: Math.round(base.r * (1 - i / count)),
        g: Math.round(base.g * (1 - i / count)),
        b: Math.round(base.b * (1 - i / count)),
        a: 1,
      }));
    else
      colors = Array.from({ length: count }, (_, i) => ({
        r: Math.round(base.r + (255 - base.r) * (i / count)),
        g: Math.round(base.g + (255 - base.g) * (i / count)),
        b: Math.round(base.b + (255 - base.b) * (i / count)),
        a: 1,
      }));
    return {
      scheme,
      base: describeColor({ ...base, a: 1 }).hex,
      colors: colors.map((c) => {
        const d = describeColor(c);
        return { hex: d.hex, rgb: d.css.rgb, hsl: d.css.hsl };
      }),
    };
  },
});

// ----------------------------------------------------------------------------- image headers
function decodeImage(input) {
  let s = input.trim();
  let declared = null;
  const dataUrl = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(s);
  if (dataUrl) {
    declared = dataUrl[1] || null;
    s = s.slice(dataUrl[0].length);
  }
  s = s.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(s) || s.length === 0) throw new Error('"image" must be Base64 image data (optionally a data: URL)');
  return { buf: Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64'), declared };
}

function readDimensions(b) {
  const ascii = (o, n) => b.toString('latin1', o, o + n);
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && ascii(12, 4) === 'IHDR') {
    const colorTypes = { 0: 'grayscale', 2: 'truecolor (RGB)', 3: 'indexed', 4: 'grayscale with alpha', 6: 'truecolor with alpha (RGBA)' };
    return {
      format: 'png',
      mimeType: 'image/png',
      width: b.readUInt32BE(16),
      height: b.readUInt32BE(20),
      bitDepth: b.length > 24 ? b[24] : null,
      colorType: b.length > 25 ? (colorTypes[b[25]] ?? null) : null,
      interlaced: b.length > 28 ? b[28] === 1 : null,
      animated: b.includes(Buffer.from('acTL')),
    };
  }
  if (b.length >= 10 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) {
    return { format: 'gif', mimeType: 'image/gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8), version: ascii(3, 3) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let o = 2;
    while (o + 9 < b.length) {
      if (b[o] !== 0xff) {
        o++;
        continue;
      }
      const marker = b[o + 1];
      if (marker === 0xff) {
        o++;
        continue;
      }
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
        o += 2;
        continue;
      }
      const len = b.readUInt16BE(o + 2);
      if ([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf].includes(marker)) {
        return {
          format: 'jpeg',
          mimeType: 'image/jpeg',
          width: b.readUInt16BE(o + 7),
          height: b.readUInt16BE(o + 5),
          bitDepth: b[o + 4],
          components: b[o + 9] ?? null,
          progressive: marker === 0xc2,
        };
      }
      o += 2 + len;
    }
    throw new Error('JPEG data ends before the frame header (SOF) that holds the dimensions; pass more of the file');
  }
  if (b.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') {
    const chunk = ascii(12, 4);
    if (chunk === 'VP8 ')
      return { format: 'webp', mimeType: 'image/webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff, lossless: false };
    if (chunk === 'VP8L') {
      const bits = b.readUInt32LE(21);
      return { format: 'webp', mimeType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1, lossless: true };
    }
    if (chunk === 'VP8X')
      return { format: 'webp', mimeType: 'image/webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1, animated: (b[20] & 0x02) !== 0 };
  }
  if (b.length >= 26 && ascii(0, 2) === 'BM') {
    const h = b.readInt32LE(22);
    return { format: 'bmp', mimeType: 'image/bmp', width: b.readInt32LE(18), height: Math.abs(h), bitDepth: b.readUInt16LE(28), topDown: h < 0 };
  }
  if (b.length >= 6 && b.readUInt16LE(0) === 0 && b.readUInt16LE(2) === 1) {
    const n = b.readUInt16LE(4);
    if (n > 0 && b.length >= 6 + 16 * n) {
      const icons = Array.from({ length: n }, (_, i) => ({ width: b[6 + 16 * i] || 256, height: b[7 + 16 * i] || 256 }));
      const big = icons.reduce((x, y) => (y.width * y.height > x.width * x.height ? y : x));
      return { format: 'ico', mimeType: 'image/x-icon', width: big.width, height: big.height, images: icons };
    }
  }
  const text = b.toString('utf8', 0, Math.min(b.length, 4096));
  if (/<svg[\s>]/i.test(text)) {
    const tag = /<svg[^>]*>/i.exec(text)?.[0] ?? '';
    const attr = (n) => new RegExp(`\\s${n}\\s*=\\s*["']([^"']+)["']`, 'i').exec(tag)?.[1];
    const num = (v) => (v && /^[\d.]+(px)?$/.test(v.trim()) ? Number(v.trim().replace('px', '')) : null);
    const vb = attr('viewBox')
      ?.trim()
      .split(/[\s,]+/)
      .map(Number);
    return {
      format: 'svg',
      mimeType: 'image/svg+xml',
      width: num(attr('width')) ?? (vb && vb.length === 4 ? vb[2] : null),
      height: num(attr('height')) ?? (vb && vb.length === 4 ? vb[3] : null),
      viewBox: vb && vb.length === 4 ? vb : null,
    };
  }
  throw new Error('Unrecognised or truncated image data: supported formats are PNG, GIF, JPEG, WebP, BMP, ICO and SVG');
}

export const readImageDimensions = tool({
  description:
    'Reads the width, height and format of an image (PNG, JPEG, GIF, WebP, BMP, ICO, SVG) from its base64 data or data URL by parsing the file header, with aspect ratio and megapixels.',
  inputSchema: {
    type: 'object',
    properties: {
      image: {
        type: 'string',
        description: 'Base64-encoded image bytes or a "data:image/...;base64," URL. The first few kilobytes are usually enough.',
        minLength: 4,
        maxLength: 10000000,
      },
    },
    required: ['image'],
    additionalProperties: false,
  },
  async execute({ image }) {
    const { buf, declared } = decodeImage(image);
    const info = readDimensions(buf);
    const gcd = (a, b) => (b ? gcd(b, a % b) : a);
    const g = info.width && info.height ? gcd(info.width, info.height) : 0;
    return {
      ...info,
      aspectRatio: g ? `${info.width / g}:${info.height / g}` : null,
      megapixels: info.width && info.height ? Math.round((info.width * info.height) / 1e4) / 100 : null,
      orientation: !info.width || !info.height ? null : info.width > info.height ? 'landscape' : info.width < info.height ? 'portrait' : 'square',
      bytes: buf.length,
      declaredMimeType: declared,
      mimeTypeMatches: declared === null ? null : declared.toLowerCase() === info.mimeType || (declared === 'image/jpg' && info.mimeType === 'image/jpeg'),
    };
  },
});
