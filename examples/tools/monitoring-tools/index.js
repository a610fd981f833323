// @toolshed-examples/monitoring-tools — SRE and monitoring helpers: SLA downtime budgets, uptime from
// incidents, latency percentiles, alert threshold evaluation and log summaries. No dependencies.

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

const PERIODS = { day: 86400, week: 604800, month: (365.25 / 12) * 86400, quarter: (365.25 / 4) * 86400, year: 365.25 * 86400 };

function humanDuration(seconds) {
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  const parts = [];
  let s = seconds;
  for (const [name, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ]) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${name}`);
      s -= Math.floor(s / size) * size;
    }
  }
  const rs = Math.round(s * 10) / 10;
  if (rs > 0 || parts.length === 0) parts.push(`${rs}s`);
  return parts.join(' ');
}

export const slaDowntime = tool({
  description:
    'Calculates the allowed downtime (error budget) for an SLA or SLO uptime percentage such as 99.9% per day, week, month, quarter and year, or the uptime percentage implied by a downtime.',
  inputSchema: {
    type: 'object',
    properties: {
      slaPercent: { type: 'number', description: 'Target availability in percent, e.g. 99.95.', exclusiveMinimum: 0, maximum: 100 },
      downtimeSeconds: {
        type: 'number',
        description: 'Alternatively, a downtime (seconds) per period to convert into an availability percentage.',
        minimum: 0,
      },
      period: {
        type: 'string',
        description: 'Period for downtimeSeconds (and the headline figure). Month = 365.25/12 days.',
        enum: ['day', 'week', 'month', 'quarter', 'year'],
        default: 'month',
      },
    },
    additionalProperties: false,
  },
  async execute({ slaPercent, downtimeSeconds, period }) {
    if ((slaPercent === undefined) === (downtimeSeconds === undefined)) throw new Error('Pass exactly one of "slaPercent" or "downtimeSeconds"');
    let sla = slaPercent;
    if (downtimeSeconds !== undefined) {
      if (downtimeSeconds > PERIODS[period]) throw new Error(`downtimeSeconds (${downtimeSeconds}) is longer than one ${period} (${PERIODS[period]} s)`);
      sla = (1 - downtimeSeconds / PERIODS[period]) * 100;
    }
    const budget = {};
    for (const [name, secs] of Object.entries(PERIODS)) {
      const allowed = Math.round(secs * (1 - sla / 100) * 1000) / 1000;
      budget[name] = { seconds: allowed, human: humanDuration(allowed) };
    }
    const nines = sla >= 100 ? null : Math.round(-Math.log10(1 - sla / 100) * 100) / 100;
    return { slaPercent: Math.round(sla * 1e6) / 1e6, nines, period, allowedDowntime: budget[period], allowedDowntimePer: budget };
  },
});

function parseTime(v, name) {
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new Error(`${name} is not a valid ISO 8601 date-time: ${JSON.stringify(v)}`);
  return t;
}

export const calculateUptime = tool({
  description:
    'Calculates uptime/availability percentage, total downtime, MTTR and MTBF for a reporting period from a list of outage incidents (start and end times), merging overlapping incidents.',
  inputSchema: {
    type: 'object',
    properties: {
      periodStart: { type: 'string', description: 'Start of the reporting period (ISO 8601 date-time).', maxLength: 64 },
      periodEnd: { type: 'string', description: 'End of the reporting period (ISO 8601 date-time).', maxLength: 64 },
      incidents: {
        type: 'array',
        description: 'Outages; each with start and end ISO 8601 date-times (an incident without end is treated as ongoing until periodEnd).',
        items: {
          type: 'object',
          description: 'One outage.',
          properties: {
            start: { type: 'string', description: 'When the outage began.' },
            end: { type: 'string', description: 'When service was restored.' },
            label: { type: 'string', description: 'Optional name of the incident.' },
          },
          required: ['start'],
        },
        maxItems: 10000,
      },
      slaPercent: { type: 'number', description: 'Optional SLA target to compare against.', exclusiveMinimum: 0, maximum: 100 },
    },
    required: ['periodStart', 'periodEnd', 'incidents'],
    additionalProperties: false,
  },
  async execute({ periodStart, periodEnd, incidents, slaPercent }) {
    const ps = parseTime(periodStart, 'periodStart');
    const pe = parseTime(periodEnd, 'periodEnd');
    if (pe <= ps) throw new Error('periodEnd must be after periodStart');
    const spans = incidents
      .map((inc, i) => {
        const s = parseTime(inc.start, `incidents[${i}].start`);
        const e = inc.end === undefined ? pe : parseTime(inc.end, `incidents[${i}].end`);
        if (e < s) throw new Error(`incidents[${i}] ends before it starts`);
        return { s: Math.max(s, ps), e: Math.min(e, pe), raw: e - s, label: inc.label ?? null };
      })
      .filter((x) => x.e > x.s);
    spans.sort((a, b) => a.s - b.s);
    const merged = [];
    for (const sp of spans) {
      const last = merged[merged.length - 1];
      if (last && sp.s <= last.e) last.e = Math.max(last.e, sp.e);
      else merged.push({ s: sp.s, e: sp.e });
    }
    const down = merged.reduce((t, m) => t + (m.e - m.s), 0);
    const total = pe - ps;
    const uptime = ((total - down) / total) * 100;
    const longest = merged.reduce((mx, m) => Math.max(mx, m.e - m.s), 0);
    const out = {
      uptimePercent: Math.round(uptime * 10000) / 10000,
      downtimeSeconds: down / 1000,
      downtime: humanDuration(down / 1000),
      periodSeconds: total / 1000,
      incidentCount: incidents.length,
      outageWindows: merged.length,
      longestOutageSeconds: longest / 1000,
      mttrSeconds: merged.length ? Math.round(down / merged.length) / 1000 : null,
      mtbfSeconds: merged.length ? Math.round((total - down) / merged.length) / 1000 : null,
    };
    if (slaPercent !== undefined) {
      const budget = total * (1 - slaPercent / 100);
      out.sla = {
        target: slaPercent,
        met: uptime >= slaPercent,
        budgetSeconds: Math.round(budget) / 1000,
        budgetRemainingSeconds: Math.round(budget - down) / 1000,
        budgetUsedPercent: budget > 0 ? Math.round((down / budget) * 1000) / 10 : null,
      };
    }
    return out;
  },
});

function percentile(sorted, p) {
  if (sorted.length === 1) return sorted[0];
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export const latencyPercentiles = tool({
  description:
    'Computes latency or response-time statistics from a list of measurements: p50, p90, p95, p99 (or custom percentiles), min, max, mean, standard deviation and an SLO check.',
  inputSchema: {
    type: 'object',
    properties: {
      values: {
        type: 'array',
        description: 'The measurements, e.g. response times in milliseconds.',
        items: { type: 'number', description: 'One measurement.' },
        minItems: 1,
        maxItems: 1000000,
      },
      percentiles: {
        type: 'array',
        description: 'Percentiles to compute (0-100).',
        items: { type: 'number', minimum: 0, maximum: 100, description: 'A percentile.' },
        default: [50, 90, 95, 99],
      },
      thresholdMs: { type: 'number', description: 'Optional latency objective; reports the share of values at or below it.', minimum: 0 },
    },
    required: ['values'],
    additionalProperties: false,
  },
  async execute({ values, percentiles, thresholdMs }) {
    const sorted = [...values].sort((a, b) => a - b);
    const n = sorted.length;
    const mean = sorted.reduce((s, v) => s + v, 0) / n;
    const variance = sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
    const r = (v) => Math.round(v * 1000) / 1000;
    const result = {
      count: n,
      min: sorted[0],
      max: sorted[n - 1],
      mean: r(mean),
      median: r(percentile(sorted, 50)),
      stdDev: r(Math.sqrt(variance)),
      percentiles: Object.fromEntries(percentiles.map((p) => [`p${p}`, r(percentile(sorted, p))])),
    };
    if (thresholdMs !== undefined) {
      const within = sorted.filter((v) => v <= thresholdMs).length;
      result.threshold = { thresholdMs, withinCount: within, withinPercent: Math.round((within / n) * 100000) / 1000 };
    }
    return result;
  },
});

const OPS = { '>': (a, b) => a > b, '>=': (a, b) => a >= b, '<': (a, b) => a < b, '<=': (a, b) => a <= b, '==': (a, b) => a === b, '!=': (a, b) => a !== b };
const SEVERITY_ORDER = ['ok', 'info', 'warning', 'critical'];

export const evaluateThresholds = tool({
  description:
    'Evaluates monitoring metrics (CPU, memory, error rate, latency...) against alert rules with thresholds and severities, and reports which alerts fire and the overall health status.',
  inputSchema: {
    type: 'object',
    properties: {
      metrics: {
        type: 'object',
        description: 'Current metric values by name, e.g. {"cpu_percent": 91, "error_rate": 0.2}.',
        additionalProperties: { type: 'number', description: 'Metric value.' },
      },
      rules: {
        type: 'array',
        description: 'Alert rules checked against the metrics.',
        minItems: 1,
        maxItems: 1000,
        items: {
          type: 'object',
          description: 'One alert rule.',
          properties: {
            metric: { type: 'string', description: 'Metric name to check.' },
            operator: { type: 'string', description: 'Comparison operator.', enum: ['>', '>=', '<', '<=', '==', '!='] },
            threshold: { type: 'number', description: 'Value to compare against.' },
            severity: { type: 'string', description: 'Severity when the rule fires.', enum: ['info', 'warning', 'critical'] },
            name: { type: 'string', description: 'Optional alert name.' },
          },
          required: ['metric', 'operator', 'threshold'],
        },
      },
      missingMetric: { type: 'string', description: 'How to treat rules whose metric is absent.', enum: ['ignore', 'fire'], default: 'ignore' },
    },
    required: ['metrics', 'rules'],
    additionalProperties: false,
  },
  async execute({ metrics, rules, missingMetric }) {
    const firing = [];
    const passing = [];
    const missing = [];
    rules.forEach((rule, i) => {
      const severity = rule.severity ?? 'warning';
      const name = rule.name ?? `${rule.metric} ${rule.operator} ${rule.threshold}`;
      if (!(rule.metric in metrics)) {
        missing.push(rule.metric);
        if (missingMetric === 'fire') firing.push({ rule: i, name, metric: rule.metric, value: null, severity, message: `Metric "${rule.metric}" is missing` });
        return;
      }
      const value = metrics[rule.metric];
      if (OPS[rule.operator](value, rule.threshold))
        firing.push({
          rule: i,
          name,
          metric: rule.metric,
          value,
          threshold: rule.threshold,
          severity,
          message: `${rule.metric} is ${value} (${rule.operator} ${rule.threshold})`,
        });
      else passing.push({ rule: i, name, metric: rule.metric, value });
    });
    firing.sort((a, b) => SEVERITY_ORDER.indexOf(b.severity) - SEVERITY_ORDER.indexOf(a.severity) || a.rule - b.rule);
    const status = firing.reduce((s, f) => (SEVERITY_ORDER.indexOf(f.severity) > SEVERITY_ORDER.indexOf(s) ? f.severity : s), 'ok');
    return { status, firingCount: firing.length, firing, passing, missingMetrics: [...new Set(missing)] };
  },
});

const LEVEL_RE = /\b(FATAL|CRITICAL|CRIT|ERROR|ERR|WARNING|WARN|INFO|NOTICE|DEBUG|TRACE)\b/i;
const LEVEL_MAP = {
  fatal: 'fatal',
  critical: 'fatal',
  crit: 'fatal',
  error: 'error',
  err: 'error',
  warning: 'warn',
  warn: 'warn',
  info: 'info',
  notice: 'info',
  debug: 'debug',
  trace: 'debug',
};

export const summarizeLogs = tool({
  description:
    'Summarizes application or web-server log text: counts lines by level (error, warn, info), HTTP status classes from access logs, the most frequent error messages and the time range covered.',
  inputSchema: {
    type: 'object',
    properties: {
      logs: {
        type: 'string',
        description: 'Log text, one entry per line (plain text, JSON lines, or Apache/Nginx access log format).',
        minLength: 1,
        maxLength: 5000000,
      },
      topN: { type: 'integer', description: 'How many of the most frequent error/warning messages to return.', minimum: 1, maximum: 100, default: 5 },
    },
    required: ['logs'],
    additionalProperties: false,
  },
  async execute({ logs, topN }) {
    const lines = logs.split(/\r?\n/).filter((l) => l.trim() !== '');
    const levels = { fatal: 0, error: 0, warn: 0, info: 0, debug: 0, unknown: 0 };
    const statusClasses = {};
    const messages = new Map();
    let first = null;
    let last = null;
    for (const line of lines) {
      let level = null;
      let message = line;
      let time = null;
      if (line.trim().startsWith('{')) {
        try {
          const o = JSON.parse(line);
          const lv = o.level ?? o.severity ?? o.lvl;
          if (typeof lv === 'string') level = LEVEL_MAP[lv.toLowerCase()] ?? null;
          else if (typeof lv === 'number') level = lv >= 60 ? 'fatal' : lv >= 50 ? 'error' : lv >= 40 ? 'warn' : lv >= 30 ? 'info' : 'debug';
          message = String(o.msg ?? o.message ?? line);
          time = o.time ?? o.timestamp ?? o['@timestamp'] ?? null;
          if (typeof time === 'number') time = new Date(time > 1e12 ? time : time * 1000).toISOString();
        } catch {
          /* not JSON */
        }
      }
      const access = /"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE) [^"]*" (\d{3}) /.exec(line);
      if (access) {
        const cls = `${access[1][0]}xx`;
        statusClasses[cls] = (statusClasses[cls] ?? 0) + 1;
        if (!level) level = access[1][0] === '5' ? 'error' : access[1][0] === '4' ? 'warn' : 'info';
        const at = /\[(\d{2})\/(\w{3})\/(\d{4}):(\d{2}:\d{2}:\d{2}) ([+-]\d{4})\]/.exec(line);
        if (at)
          time = `${at[3]}-${String('JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(at[2]) / 3 + 1).padStart(2, '0')}-${at[1]}T${at[4]}${at[5].slice(0, 3)}:${at[5].slice(3)}`;
      }
      if (!level) {
        const m = LEVEL_RE.exec(line);
        level = m ? LEVEL_MAP[m[1].toLowerCase()] : null;
      }
      if (!time)
        time = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/.exec(line)?.[0]?.replace(' ', 'T').replace(',', '.') ?? null;
      levels[level ?? 'unknown']++;
      if (time) {
        const t = Date.parse(time);
        if (!Number.isNaN(t)) {
          if (first === null || t < first) first = t;
          if (last === null || t > last) last = t;
        }
      }
      if (level === 'error' || level === 'fatal' || level === 'warn') {
        // normalise the message so that repeated errors group together: drop timestamps, ids, numbers
        const normalise = (text) =>
          text
            .replace(/\d{4}-\d{2}-\d{2}[T ][\d:.,]+(Z|[+-]\d{2}:?\d{2})?/g, '')
            .replace(LEVEL_RE, '')
            .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
            .replace(/\b0x[0-9a-f]+\b|\d+(\.\d+)*/gi, '<n>')
            .replace(/^[\s:\-[\]|]+/, '')
            .trim()
            .slice(0, 300);
        const request = access ? /"([A-Z]+ [^" ]*)[^"]*"/.exec(line) : null;
        const key = access ? `${normalise(request ? request[1] : 'request')} → ${access[1]}` : normalise(message);
        const e = messages.get(key) ?? { message: key, count: 0, level };
        e.count++;
        messages.set(key, e);
      }
    }
    const total = lines.length;
    return {
      totalLines: total,
      levels,
      errorRate: total ? Math.round(((levels.error + levels.fatal) / total) * 10000) / 10000 : 0,
      httpStatusClasses: statusClasses,
      topIssues: [...messages.values()].sort((a, b) => b.count - a.count).slice(0, topN),
      timeRange: first === null ? null : { first: new Date(first).toISOString(), last: new Date(last).toISOString(), spanSeconds: (last - first) / 1000 },
    };
  },
});
