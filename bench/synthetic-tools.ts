/**
 * Synthetic but realistic tool documents for the search and HTTP benchmarks: camelCase export names built from a
 * verb/object/format vocabulary, sentence-like descriptions, scoped package names and categories, generated from a
 * fixed seed so every run indexes the same corpus.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SearchDocument } from '../core/search/engine.js';
import type { Category, HealthStatus } from '../core/types.js';

interface Domain {
  category: Category;
  objects: string[];
  verbs: string[];
  extras: string[];
}

const DOMAINS: Domain[] = [
  {
    category: 'text-analysis',
    objects: ['text', 'sentence', 'word', 'paragraph', 'keyword', 'sentiment', 'language', 'summary', 'slug', 'string', 'readability', 'entity'],
    verbs: ['analyze', 'count', 'detect', 'extract', 'summarize', 'translate', 'normalize', 'tokenize', 'classify', 'score'],
    extras: ['unicode', 'english', 'multilingual', 'markdown', 'plain'],
  },
  {
    category: 'data-processing',
    objects: ['csv', 'json', 'xml', 'yaml', 'table', 'row', 'column', 'record', 'array', 'schema', 'dataset', 'number'],
    verbs: ['convert', 'parse', 'merge', 'filter', 'sort', 'validate', 'transform', 'flatten', 'aggregate', 'deduplicate'],
    extras: ['nested', 'streaming', 'large', 'typed', 'tabular'],
  },
  {
    category: 'file-operations',
    objects: ['file', 'directory', 'archive', 'zip', 'path', 'pdf', 'spreadsheet', 'upload', 'attachment', 'chunk'],
    verbs: ['read', 'write', 'compress', 'extract', 'list', 'copy', 'rename', 'split', 'checksum', 'watch'],
    extras: ['local', 'temporary', 'binary', 'gzip', 'recursive'],
  },
  {
    category: 'communication',
    objects: ['email', 'message', 'notification', 'sms', 'slack', 'webhook', 'newsletter', 'invite', 'channel'],
    verbs: ['send', 'schedule', 'format', 'queue', 'broadcast', 'draft', 'forward', 'template', 'notify'],
    extras: ['html', 'transactional', 'bulk', 'templated', 'team'],
  },
  {
    category: 'database',
    objects: ['query', 'table', 'index', 'migration', 'backup', 'record', 'connection', 'collection', 'row'],
    verbs: ['run', 'backup', 'restore', 'migrate', 'inspect', 'optimize', 'export', 'import', 'seed'],
    extras: ['postgres', 'mysql', 'sqlite', 'mongodb', 'redis'],
  },
  {
    category: 'api-integration',
    objects: ['request', 'endpoint', 'token', 'weather', 'repository', 'issue', 'payment', 'invoice', 'calendar', 'event'],
    verbs: ['fetch', 'call', 'create', 'update', 'sync', 'list', 'lookup', 'refresh', 'paginate'],
    extras: ['rest', 'graphql', 'oauth', 'github', 'stripe'],
  },
  {
    category: 'image-processing',
    objects: ['image', 'photo', 'thumbnail', 'color', 'palette', 'qrcode', 'barcode', 'pixel', 'favicon'],
    verbs: ['resize', 'crop', 'rotate', 'compress', 'convert', 'generate', 'blur', 'detect', 'watermark'],
    extras: ['png', 'jpeg', 'webp', 'svg', 'grayscale'],
  },
  {
    category: 'web-scraping',
    objects: ['page', 'link', 'html', 'sitemap', 'url', 'metadata', 'title', 'headline', 'price', 'feed'],
    verbs: ['scrape', 'crawl', 'extract', 'parse', 'download', 'monitor', 'strip', 'resolve', 'clean'],
    extras: ['rss', 'dynamic', 'robots', 'canonical', 'open graph'],
  },
  {
    category: 'automation',
    objects: ['task', 'workflow', 'schedule', 'cron', 'reminder', 'job', 'trigger', 'date', 'timezone', 'duration'],
    verbs: ['schedule', 'run', 'retry', 'delay', 'chain', 'calculate', 'parse', 'format', 'convert'],
    extras: ['recurring', 'daily', 'weekly', 'business', 'iso'],
  },
  {
    category: 'ai-ml',
    objects: ['embedding', 'prompt', 'model', 'classifier', 'token', 'completion', 'vector', 'similarity', 'label'],
    verbs: ['generate', 'embed', 'classify', 'rank', 'cluster', 'predict', 'estimate', 'compare', 'chunk'],
    extras: ['cosine', 'semantic', 'zero shot', 'local', 'batch'],
  },
  {
    category: 'security',
    objects: ['password', 'hash', 'token', 'secret', 'key', 'signature', 'certificate', 'uuid', 'checksum', 'jwt'],
    verbs: ['hash', 'verify', 'generate', 'encrypt', 'decrypt', 'sign', 'rotate', 'check', 'encode', 'decode'],
    extras: ['sha256', 'bcrypt', 'aes', 'hmac', 'base64'],
  },
  {
    category: 'monitoring',
    objects: ['uptime', 'latency', 'metric', 'log', 'alert', 'status', 'certificate', 'dns', 'ping', 'error'],
    verbs: ['check', 'monitor', 'measure', 'track', 'report', 'aggregate', 'ping', 'alert', 'trace'],
    extras: ['http', 'tls', 'p99', 'realtime', 'regional'],
  },
];

const VENDORS = ['acme', 'toolbox', 'agentkit', 'opentools', 'devutils', 'quickops', 'datacraft', 'nimbus', 'forge', 'relay'];
const PHRASES = [
  'Returns the result as {out}.',
  'Handles {extra} input and reports errors clearly.',
  'Useful for agents that need to {verb} {object}s quickly.',
  'Works with {extra} sources and large inputs.',
  'Accepts an optional limit and returns at most that many items.',
  'No network access required.',
];
const OUTPUTS = ['JSON', 'a string', 'a list of objects', 'a number', 'a summary object', 'plain text'];

/** Deterministic PRNG (mulberry32), so benchmarks index the same corpus every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const camel = (words: string[]) =>
  words
    .map((w, i) => (i === 0 ? w : cap(w)))
    .join('')
    .replace(/\s+/g, '');

/** n tool documents over all twelve categories; about 5% BROKEN and 10% UNKNOWN. */
export function syntheticTools(n: number, seed = 42): SearchDocument[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const docs: SearchDocument[] = [];
  const names = new Set<string>();
  for (let i = 0; i < n; i++) {
    const d = DOMAINS[i % DOMAINS.length];
    const verb = pick(d.verbs);
    const object = pick(d.objects);
    const extra = pick(d.extras);
    let words = [verb, object];
    if (rnd() < 0.5) words = rnd() < 0.5 ? [verb, extra, object] : [verb, object, 'to', pick(d.objects)];
    let name = camel(words);
    if (names.has(name)) name = `${name}${cap(pick(VENDORS))}${i}`;
    names.add(name);
    const sentences = [`${cap(verb)} ${rnd() < 0.5 ? 'a' : 'one or more'} ${extra} ${object}${rnd() < 0.5 ? 's' : ''}.`];
    const extraCount = 1 + Math.floor(rnd() * 3);
    for (let k = 0; k < extraCount; k++) {
      sentences.push(
        pick(PHRASES).replace('{out}', pick(OUTPUTS)).replace('{extra}', pick(d.extras)).replace('{verb}', pick(d.verbs)).replace('{object}', pick(d.objects)),
      );
    }
    const roll = rnd();
    const healthStatus: HealthStatus = roll < 0.05 ? 'BROKEN' : roll < 0.15 ? 'UNKNOWN' : 'HEALTHY';
    docs.push({
      id: `syn-${i.toString(36).padStart(4, '0')}`,
      name,
      description: sentences.join(' '),
      packageName: `@${pick(VENDORS)}/${d.category.split('-')[0]}-${pick(d.objects).replace(/\s+/g, '-')}-tools`,
      category: d.category,
      healthStatus,
      qualityScore: Math.round(rnd() * 1000) / 1000,
    });
  }
  return docs;
}

/** The vocabulary the documents were built from, for generating realistic queries. */
export function syntheticVocabulary(): { category: Category; words: string[] }[] {
  return DOMAINS.map((d) => ({ category: d.category, words: [...d.verbs, ...d.objects, ...d.extras] }));
}

/**
 * The real example tool packages (examples/tools/<pkg>/) as search documents: name is the export name, the
 * description is read by importing the package, category comes from the package.json `toolshed` field.
 * Packages that fail to load are left out and named in `skipped`.
 */
export async function exampleTools(dir: string): Promise<{ docs: SearchDocument[]; skipped: string[] }> {
  const docs: SearchDocument[] = [];
  const skipped: string[] = [];
  const folders = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()) : [];
  for (const folder of folders.map((e) => e.name).sort()) {
    const root = join(dir, folder);
    try {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      const meta = pkg.toolshed ?? pkg.tpmjs;
      if (!meta?.tools) throw new Error('no toolshed field');
      const entry = pkg.exports?.['.']?.import ?? pkg.exports?.['.'] ?? pkg.main ?? 'index.js';
      const mod = await import(pathToFileURL(join(root, typeof entry === 'string' ? entry : 'index.js')).href);
      for (const t of meta.tools as { exportName: string }[]) {
        const tool = mod[t.exportName] ?? mod.default?.[t.exportName];
        if (typeof tool?.description !== 'string') throw new Error(`export ${t.exportName} has no description`);
        docs.push({
          id: `${pkg.name}/${t.exportName}`,
          name: t.exportName,
          description: tool.description,
          packageName: pkg.name,
          category: meta.category,
          healthStatus: 'HEALTHY',
          qualityScore: 0.5,
        });
      }
    } catch (err) {
      skipped.push(`${folder}: ${(err as Error).message}`);
    }
  }
  return { docs, skipped };
}
