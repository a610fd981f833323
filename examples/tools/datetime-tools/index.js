// @toolshed-examples/datetime-tools — time-zone aware date arithmetic, date differences, calendar facts
// (weekday, ISO week) and cron schedule explanation / next run times. Plain ESM, no dependencies.

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

// ----------------------------------------------------------------------------- time-zone helpers
const DAY_MS = 86400000;
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const formatters = new Map();

function checkTimeZone(tz) {
  if (formatters.has(tz)) return tz;
  try {
    formatters.set(
      tz,
      new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      }),
    );
  } catch {
    throw new Error(`Unknown time zone ${JSON.stringify(tz)}; use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"`);
  }
  return tz;
}

/** Absolute UTC milliseconds of a proleptic Gregorian wall time, read as if it were UTC. */
function utcMs(y, mo, d, h = 0, mi = 0, s = 0, ms = 0) {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** Wall-clock fields of an instant in a time zone. */
function wallOf(t, tz) {
  const parts = {};
  for (const p of formatters.get(checkTimeZone(tz)).formatToParts(new Date(t))) parts[p.type] = p.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const ms = ((t % 1000) + 1000) % 1000;
  return {
    year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    minute: Number(parts.minute),
    second: Number(parts.second),
    millisecond: ms,
  };
}
const wallMs = (w) => utcMs(w.year, w.month, w.day, w.hour, w.minute, w.second, w.millisecond);
const offsetMs = (t, tz) => wallMs(wallOf(t, tz)) - t;

/** Instant of a wall time in a zone. Ambiguous times (DST fall-back) take the earlier instant;
 *  non-existent times (DST spring-forward gap) move forward by the gap, as Temporal's "compatible" mode does. */
function wallToInstant(w, tz) {
  const local = wallMs(w);
  const before = offsetMs(local - DAY_MS, tz);
  const after = offsetMs(local + DAY_MS, tz);
  const candidates = [...new Set([before, after])].map((off) => local - off).filter((t) => wallMs(wallOf(t, tz)) === local);
  if (candidates.length) return Math.min(...candidates);
  return local - before;
}

function pad(n, len = 2) {
  const s = String(Math.abs(n)).padStart(len, '0');
  return n < 0 ? `-${s}` : s;
}
function formatOffset(off) {
  if (off === 0) return '+00:00';
  const mins = Math.round(off / 60000);
  const sign = mins < 0 ? '-' : '+';
  return `${sign}${pad(Math.floor(Math.abs(mins) / 60))}:${pad(Math.abs(mins) % 60)}`;
}
function isoIn(t, tz) {
  const w = wallOf(t, tz);
  const off = offsetMs(t, tz);
  const year = w.year >= 0 && w.year <= 9999 ? pad(w.year, 4) : (w.year < 0 ? '-' : '+') + String(Math.abs(w.year)).padStart(6, '0');
  const frac = w.millisecond ? `.${pad(w.millisecond, 3)}` : '';
  return `${year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${frac}${tz === 'UTC' ? 'Z' : formatOffset(off)}`;
}

/** Parses an ISO 8601 date/date-time. Values without an offset are read as wall time in `tz`. */
function parseDate(input, tz, name = 'date') {
  const s = input.trim();
  if (/^now$/i.test(s)) return Date.now();
  const m = /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?$/.exec(s);
  if (m) {
    const [y, mo, d, h = 0, mi = 0, sec = 0] = m.slice(1, 7).map((v) => (v === undefined ? 0 : Number(v)));
    const ms = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
    if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59)
      throw new Error(`"${name}" is not a valid calendar date/time: ${JSON.stringify(input)}`);
    return wallToInstant({ year: y, month: mo, day: d, hour: h, minute: mi, second: sec, millisecond: ms }, tz);
  }
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(s) || /^[A-Za-z]{3},? /.test(s)) {
    const t = Date.parse(s.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    if (!Number.isNaN(t)) return t;
  }
  throw new Error(
    `"${name}" must be an ISO 8601 date or date-time such as "2024-03-10", "2024-03-10T14:30" or "2024-03-10T14:30:00Z"; got ${JSON.stringify(input)}`,
  );
}

const isLeap = (y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y, m) => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

function addCalendar(w, years, months, days) {
  const total = w.year * 12 + (w.month - 1) + years * 12 + months;
  const year = Math.floor(total / 12);
  const month = (((total % 12) + 12) % 12) + 1;
  const day = Math.min(w.day, daysInMonth(year, month));
  const d = new Date(utcMs(year, month, day) + days * DAY_MS);
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function parseDuration(s) {
  const m =
    /^([+-])?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(
      s.trim(),
    );
  if (!m || /^[+-]?PT?$/i.test(s.trim()))
    throw new Error(`"duration" must be an ISO 8601 duration such as "P1D", "PT90M", "P1Y2M3DT4H5M6S" or "-P2W"; got ${JSON.stringify(s)}`);
  const sign = m[1] === '-' ? -1 : 1;
  const [years, months, weeks, days, hours, minutes, seconds] = m.slice(2).map((v) => (v === undefined ? 0 : Number(v)));
  if (![years, months, weeks, days].every(Number.isInteger)) throw new Error('Years, months, weeks and days in "duration" must be whole numbers');
  return { sign, years, months, weeks, days, hours, minutes, seconds };
}

function formatDuration({ years = 0, months = 0, days = 0, hours = 0, minutes = 0, seconds = 0 }, negative) {
  const date = `${years ? years + 'Y' : ''}${months ? months + 'M' : ''}${days ? days + 'D' : ''}`;
  const secs = Math.round(seconds * 1000) / 1000;
  const time = `${hours ? hours + 'H' : ''}${minutes ? minutes + 'M' : ''}${secs ? secs + 'S' : ''}`;
  const body = date + (time ? 'T' + time : '');
  return (negative ? '-' : '') + 'P' + (body || 'T0S');
}

const tzProp = {
  type: 'string',
  description: 'IANA time zone used for wall-clock and calendar arithmetic, e.g. "Europe/Paris".',
  default: 'UTC',
  maxLength: 64,
};

export const addDuration = tool({
  description:
    'Adds or subtracts an ISO 8601 duration (years, months, weeks, days, hours, minutes, seconds) to a date or date-time in a time zone, handling month ends, leap years and DST changes.',
  inputSchema: {
    type: 'object',
    properties: {
      date: {
        type: 'string',
        description: 'Start date/time in ISO 8601, e.g. "2024-01-31" or "2024-03-09T12:00:00-05:00", or "now".',
        minLength: 1,
        maxLength: 64,
      },
      duration: { type: 'string', description: 'ISO 8601 duration, e.g. "P1M", "PT36H", "P1Y2M10DT2H30M", "-P1W".', minLength: 2, maxLength: 64 },
      subtract: { type: 'boolean', description: 'Subtract the duration instead of adding it.', default: false },
      timeZone: tzProp,
    },
    required: ['date', 'duration'],
    additionalProperties: false,
  },
  async execute({ date, duration, subtract, timeZone }) {
    checkTimeZone(timeZone);
    const start = parseDate(date, timeZone);
    const d = parseDuration(duration);
    const sign = d.sign * (subtract ? -1 : 1);
    // calendar part on the wall clock, then exact time
    const w = addCalendar(wallOf(start, timeZone), sign * d.years, sign * d.months, sign * (d.weeks * 7 + d.days));
    let t = d.years || d.months || d.weeks || d.days ? wallToInstant(w, timeZone) : start;
    t += sign * Math.round((d.hours * 3600 + d.minutes * 60 + d.seconds) * 1000);
    if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw new Error('The result is outside the supported date range');
    const rw = wallOf(t, timeZone);
    return {
      result: isoIn(t, timeZone),
      resultUtc: new Date(t).toISOString(),
      start: isoIn(start, timeZone),
      timeZone,
      dayOfWeek: WEEKDAYS[new Date(utcMs(rw.year, rw.month, rw.day)).getUTCDay()],
      elapsedMilliseconds: t - start,
    };
  },
});

export const dateDifference = tool({
  description:
    'Calculates the difference between two dates or date-times: exact elapsed days, hours, minutes and seconds plus a calendar breakdown in years, months and days, time-zone and DST aware.',
  inputSchema: {
    type: 'object',
    properties: {
      start: {
        type: 'string',
        description: 'Start date/time in ISO 8601, e.g. "2024-03-09T12:00" (read in timeZone when it has no offset).',
        minLength: 1,
        maxLength: 64,
      },
      end: { type: 'string', description: 'End date/time in ISO 8601.', minLength: 1, maxLength: 64 },
      timeZone: tzProp,
    },
    required: ['start', 'end'],
    additionalProperties: false,
  },
  async execute({ start, end, timeZone }) {
    checkTimeZone(timeZone);
    const a = parseDate(start, timeZone, 'start');
    const b = parseDate(end, timeZone, 'end');
    const negative = b < a;
    const [lo, hi] = negative ? [b, a] : [a, b];
    const wlo = wallOf(lo, timeZone);
    const whi = wallOf(hi, timeZone);
    // calendar breakdown: whole months first, then whole days, then exact time
    let months = (whi.year - wlo.year) * 12 + (whi.month - wlo.month);
    while (months > 0 && wallToInstant(addCalendar(wlo, 0, months, 0), timeZone) > hi) months--;
    const afterMonths = addCalendar(wlo, 0, months, 0);
    let days = Math.max(0, Math.round((utcMs(whi.year, whi.month, whi.day) - utcMs(afterMonths.year, afterMonths.month, afterMonths.day)) / DAY_MS));
    while (days > 0 && wallToInstant(addCalendar(afterMonths, 0, 0, days), timeZone) > hi) days--;
    let rest = hi - wallToInstant(addCalendar(afterMonths, 0, 0, days), timeZone);
    const hours = Math.floor(rest / 3600000);
    rest -= hours * 3600000;
    const minutes = Math.floor(rest / 60000);
    rest -= minutes * 60000;
    const seconds = rest / 1000;
    const breakdown = { years: Math.floor(months / 12), months: months % 12, days, hours, minutes, seconds };
    const ms = b - a;
    const calendarDays = Math.round(
      (utcMs(wallOf(b, timeZone).year, wallOf(b, timeZone).month, wallOf(b, timeZone).day) -
        utcMs(wallOf(a, timeZone).year, wallOf(a, timeZone).month, wallOf(a, timeZone).day)) /
        DAY_MS,
    );
    const r = (x) => Math.round(x * 1e6) / 1e6;
    let businessDays = 0;
    for (let k = 0, step = Math.sign(calendarDays), n = Math.abs(calendarDays); k < n && n <= 200000; k++) {
      const wa = wallOf(a, timeZone);
      const dow = new Date(utcMs(wa.year, wa.month, wa.day) + step * (k + (step > 0 ? 1 : 0)) * DAY_MS).getUTCDay();
      if (dow !== 0 && dow !== 6) businessDays += step;
    }
    return {
      milliseconds: ms,
      seconds: r(ms / 1000),
      minutes: r(ms / 60000),
      hours: r(ms / 3600000),
      days: r(ms / DAY_MS),
      weeks: r(ms / (7 * DAY_MS)),
      calendarDays,
      businessDays,
      breakdown,
      negative,
      iso8601: formatDuration(breakdown, negative),
      timeZone,
    };
  },
});

function isoWeek(y, m, d) {
  const t = utcMs(y, m, d);
  const dow = new Date(t).getUTCDay() || 7;
  const thursday = new Date(t + (4 - dow) * DAY_MS);
  const weekYear = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - utcMs(weekYear, 1, 1)) / DAY_MS / 7) + 1;
  return { week, weekYear };
}

export const dateInfo = tool({
  description:
    'Describes a date: day of the week, ISO week number, day of the year, quarter, leap year, days in the month, UTC offset and Unix timestamp, in any time zone.',
  inputSchema: {
    type: 'object',
    properties: {
      date: { type: 'string', description: 'Date or date-time in ISO 8601, e.g. "2024-12-30", or "now".', minLength: 1, maxLength: 64 },
      timeZone: tzProp,
      locale: {
        type: 'string',
        description: 'BCP 47 locale for the human-readable "formatted" field, e.g. "en-US" or "de-DE".',
        default: 'en-US',
        maxLength: 35,
      },
    },
    required: ['date'],
    additionalProperties: false,
  },
  async execute({ date, timeZone, locale }) {
    checkTimeZone(timeZone);
    let fmt;
    try {
      fmt = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'full', timeStyle: 'long' });
    } catch {
      throw new Error(`Unknown locale ${JSON.stringify(locale)}`);
    }
    const t = parseDate(date, timeZone);
    const w = wallOf(t, timeZone);
    const dow = new Date(utcMs(w.year, w.month, w.day)).getUTCDay();
    const { week, weekYear } = isoWeek(w.year, w.month, w.day);
    const dayOfYear = Math.round((utcMs(w.year, w.month, w.day) - utcMs(w.year, 1, 1)) / DAY_MS) + 1;
    const off = offsetMs(t, timeZone);
    return {
      iso: isoIn(t, timeZone),
      utc: new Date(t).toISOString(),
      unixSeconds: Math.floor(t / 1000),
      unixMilliseconds: t,
      year: w.year,
      month: w.month,
      monthName: MONTHS[w.month - 1],
      day: w.day,
      dayOfWeek: WEEKDAYS[dow],
      isoDayOfWeek: dow || 7,
      isWeekend: dow === 0 || dow === 6,
      dayOfYear,
      isoWeek: week,
      isoWeekYear: weekYear,
      quarter: Math.ceil(w.month / 3),
      isLeapYear: isLeap(w.year),
      daysInMonth: daysInMonth(w.year, w.month),
      daysInYear: isLeap(w.year) ? 366 : 365,
      utcOffset: formatOffset(off),
      isDst: off > Math.min(offsetMs(utcMs(w.year, 1, 1), timeZone), offsetMs(utcMs(w.year, 7, 1), timeZone)),
      timeZone,
      formatted: fmt.format(new Date(t)),
    };
  },
});

// ----------------------------------------------------------------------------- cron
const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'dayOfMonth', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'dayOfWeek', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];
const MACROS = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

function parseCron(expression) {
  const expr = expression.trim();
  const expanded = MACROS[expr.toLowerCase()] ?? expr;
  if (/^@/.test(expanded)) throw new Error(`Unknown cron macro ${JSON.stringify(expr)}; supported: ${Object.keys(MACROS).join(', ')}`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) {
    throw new Error(`A cron expression needs 5 fields (minute hour day-of-month month day-of-week); got ${parts.length} in ${JSON.stringify(expr)}`);
  }
  const fields = parts.map((raw, idx) => {
    const f = CRON_FIELDS[idx];
    const values = new Set();
    const num = (token) => {
      const up = token.toUpperCase();
      if (f.names?.includes(up)) return f.names.indexOf(up) + (f.name === 'month' ? 1 : 0);
      if (!/^\d+$/.test(token))
        throw new Error(`Invalid value ${JSON.stringify(token)} in the ${f.name} field${/[LW#]/i.test(token) ? ' (L, W and # are not supported)' : ''}`);
      const n = Number(token);
      if (n < f.min || n > f.max) throw new Error(`Value ${n} is out of range ${f.min}-${f.max} in the ${f.name} field`);
      return n;
    };
    for (const item of raw.split(',')) {
      const m = /^(\*|\?|[^/-]+)(?:-([^/]+))?(?:\/(\d+))?$/.exec(item);
      if (!m) throw new Error(`Invalid ${f.name} field ${JSON.stringify(raw)}`);
      if (m[1] === '?' && f.name !== 'dayOfMonth' && f.name !== 'dayOfWeek') throw new Error(`"?" is only allowed in the day fields`);
      const step = m[3] === undefined ? 1 : Number(m[3]);
      if (step < 1) throw new Error(`Step must be at least 1 in the ${f.name} field`);
      let lo;
      let hi;
      if (m[1] === '*' || m[1] === '?') {
        lo = f.min;
        hi = f.name === 'dayOfWeek' ? 6 : f.max;
      } else {
        lo = num(m[1]);
        hi = m[2] !== undefined ? num(m[2]) : m[3] !== undefined ? (f.name === 'dayOfWeek' ? 6 : f.max) : lo;
      }
      if (m[1] === '*' && m[2] !== undefined) throw new Error(`Invalid range in the ${f.name} field`);
      if (hi < lo) throw new Error(`Range ${lo}-${hi} is backwards in the ${f.name} field`);
      for (let v = lo; v <= hi; v += step) values.add(f.name === 'dayOfWeek' && v === 7 ? 0 : v);
    }
    return { name: f.name, raw, values: [...values].sort((x, y) => x - y), star: raw === '*' || raw === '?', wildcardStep: /^[*?]\/\d+$/.test(raw) };
  });
  return { expression: expr, expanded, fields };
}

function listText(items) {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
function fieldText(field, unitName, label) {
  // describe the raw syntax piece by piece: "every 15 minutes", "Monday through Friday", "1, 15"
  return listText(
    field.raw.split(',').map((item) => {
      const m = /^(\*|\?|[^/-]+)(?:-([^/]+))?(?:\/(\d+))?$/.exec(item);
      const name = (v) => label(v);
      if (m[1] === '*' || m[1] === '?') return m[3] ? `every ${m[3]} ${unitName}s` : `every ${unitName}`;
      const def = CRON_FIELDS.find((f) => f.name === field.name);
      const toNum = (tok) => (def.names?.includes(tok.toUpperCase()) ? def.names.indexOf(tok.toUpperCase()) + (def.name === 'month' ? 1 : 0) : Number(tok));
      const lo = toNum(m[1]);
      if (m[2] !== undefined) return `${m[3] ? `every ${m[3]} ${unitName}s from ` : ''}${name(lo)} through ${name(toNum(m[2]))}`;
      if (m[3]) return `every ${m[3]} ${unitName}s starting at ${name(lo)}`;
      return name(lo);
    }),
  );
}

function describeCron(parsed) {
  const [mi, h, dom, mon, dow] = parsed.fields;
  let time;
  const simpleList = (f) => /^\d+(,\d+)*$/.test(f.raw);
  if (simpleList(mi) && simpleList(h) && mi.values.length * h.values.length <= 6) {
    time = 'At ' + listText(h.values.flatMap((hh) => mi.values.map((mm) => `${pad(hh)}:${pad(mm)}`)));
  } else {
    const perHour = h.star ? ' past every hour' : '';
    const minutePart = mi.star
      ? 'Every minute'
      : mi.wildcardStep
        ? `Every ${mi.raw.split('/')[1]} minutes`
        : simpleList(mi)
          ? `At minute ${listText(mi.values.map(String))}${perHour}`
          : `At minutes ${fieldText(mi, 'minute', String)}${perHour}`;
    let hourPart = '';
    if (h.wildcardStep) hourPart = `, every ${h.raw.split('/')[1]} hours`;
    else if (/^\d+-\d+$/.test(h.raw)) hourPart = `, between ${pad(h.values[0])}:00 and ${pad(h.values[h.values.length - 1])}:59`;
    else if (simpleList(h)) hourPart = `, during hour${h.values.length > 1 ? 's' : ''} ${listText(h.values.map((x) => pad(x) + ':00'))}`;
    else if (!h.star) {
      const txt = fieldText(h, 'hour', (x) => pad(x) + ':00');
      hourPart = `, ${txt.startsWith('every') ? txt : 'hours ' + txt}`;
    }
    time = minutePart + hourPart;
  }
  const parts = [time];
  const dayName = (v) => WEEKDAYS[v % 7];
  if (!dom.star && !dow.star) parts.push(`on day ${fieldText(dom, 'day', String)} of the month or on ${fieldText(dow, 'day', dayName)}`);
  else if (!dom.star) parts.push(`on day ${fieldText(dom, 'day', String)} of the month`.replace('on day every', 'every'));
  else if (!dow.star) parts.push(`${dow.raw.includes('/') ? '' : 'on '}${fieldText(dow, 'day', dayName)}`);
  if (!mon.star) parts.push(`in ${fieldText(mon, 'month', (v) => MONTHS[v - 1])}`.replace('in every', 'every'));
  return parts.join(', ');
}

export const explainCron = tool({
  description:
    'Explains a cron expression (5-field crontab schedule or @daily-style macro) in plain English and lists the minutes, hours, days, months and weekdays on which it fires.',
  inputSchema: {
    type: 'object',
    properties: {
      expression: { type: 'string', description: 'Cron expression, e.g. "*/15 9-17 * * MON-FRI" or "@weekly".', minLength: 1, maxLength: 200 },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  async execute({ expression }) {
    const parsed = parseCron(expression);
    const [minute, hour, dayOfMonth, month, dayOfWeek] = parsed.fields;
    return {
      expression: parsed.expression,
      normalized: parsed.expanded,
      description: describeCron(parsed),
      fields: {
        minute: minute.values,
        hour: hour.values,
        dayOfMonth: dayOfMonth.values,
        month: month.values,
        dayOfWeek: dayOfWeek.values,
      },
      runsPerDay: dayOfMonth.star && dayOfWeek.star ? minute.values.length * hour.values.length : null,
    };
  },
});

export const nextCronRuns = tool({
  description:
    'Calculates the next run times of a cron schedule (5-field crontab expression) after a given moment in a chosen time zone, for planning and checking scheduled jobs.',
  inputSchema: {
    type: 'object',
    properties: {
      expression: { type: 'string', description: 'Cron expression, e.g. "0 9 * * 1-5" or "@hourly".', minLength: 1, maxLength: 200 },
      from: { type: 'string', description: 'Start searching after this ISO 8601 date-time (default: now).', default: 'now', maxLength: 64 },
      count: { type: 'integer', description: 'How many run times to return.', minimum: 1, maximum: 100, default: 5 },
      timeZone: { ...tzProp, description: 'IANA time zone in which the cron schedule is interpreted, e.g. "America/New_York".' },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  async execute({ expression, from, count, timeZone }) {
    checkTimeZone(timeZone);
    const parsed = parseCron(expression);
    const [mi, h, dom, mon, dow] = parsed.fields;
    const start = parseDate(from, timeZone, 'from');
    const runs = [];
    const w0 = wallOf(start, timeZone);
    let dayT = utcMs(w0.year, w0.month, w0.day);
    const domSet = new Set(dom.values);
    const dowSet = new Set(dow.values);
    const monSet = new Set(mon.values);
    const both = !dom.star && !dow.star;
    let last = start;
    for (let k = 0; k < 366 * 28 && runs.length < count; k++, dayT += DAY_MS) {
      const d = new Date(dayT);
      const month = d.getUTCMonth() + 1;
      if (!monSet.has(month)) continue;
      const domOk = domSet.has(d.getUTCDate());
      const dowOk = dowSet.has(d.getUTCDay());
      if (both ? !(domOk || dowOk) : !(domOk && dowOk)) continue;
      for (const hh of h.values) {
        for (const mm of mi.values) {
          const w = { year: d.getUTCFullYear(), month, day: d.getUTCDate(), hour: hh, minute: mm, second: 0, millisecond: 0 };
          const t = wallToInstant(w, timeZone);
          const back = wallOf(t, timeZone);
          if (back.hour !== hh || back.minute !== mm) continue; // skipped by a DST jump
          if (t <= last) continue;
          runs.push(t);
          last = t;
          if (runs.length >= count) break;
        }
        if (runs.length >= count) break;
      }
    }
    if (runs.length === 0) throw new Error(`The cron expression ${JSON.stringify(expression)} never fires (check the day and month fields)`);
    return {
      expression: parsed.expression,
      description: describeCron(parsed),
      timeZone,
      from: isoIn(start, timeZone),
      runs: runs.map((t) => isoIn(t, timeZone)),
      runsUtc: runs.map((t) => new Date(t).toISOString()),
    };
  },
});
