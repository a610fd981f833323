/**
 * TPMJS's current `tpmjs` field (https://tpmjs.com, @tpmjs/types): `category` (theirs, mapped onto our twelve by the
 * table below, which docs/tool-packages.md repeats), optional `tools` (`name`, or the legacy `exportName`; an
 * optional description), optional `env` (`name`, `description`, `required`, `default`). Without `tools` (or with an
 * empty list) the package's tools are discovered among its exports.
 */
import { z } from 'zod';
import type { Category, EnvVarSpec } from '../types.js';
import type { ManifestTool } from './manifest.js';

/** Every TPMJS category → ours. TPMJS's legacy categories are ours already. */
export const TPMJS_CATEGORY_MAP: Readonly<Record<string, Category>> = {
  research: 'web-scraping',
  web: 'web-scraping',
  html: 'web-scraping',
  data: 'data-processing',
  statistics: 'data-processing',
  documentation: 'text-analysis',
  doc: 'text-analysis',
  text: 'text-analysis',
  engineering: 'automation',
  utilities: 'automation',
  agent: 'ai-ml',
  ops: 'monitoring',
  security: 'security',
  compliance: 'security',
  'web-scraping': 'web-scraping',
  'data-processing': 'data-processing',
  'file-operations': 'file-operations',
  communication: 'communication',
  database: 'database',
  'api-integration': 'api-integration',
  'image-processing': 'image-processing',
  'text-analysis': 'text-analysis',
  automation: 'automation',
  'ai-ml': 'ai-ml',
  monitoring: 'monitoring',
};

const NAMES = Object.keys(TPMJS_CATEGORY_MAP) as [string, ...string[]];
export const tpmjsCategory = z
  .enum(NAMES, { message: `must be one of TPMJS's categories: ${NAMES.join(', ')}` })
  .transform((c): Category => TPMJS_CATEGORY_MAP[c]!);

const ENV_NAME = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE name');
const tpmjsEnv = z.union([
  ENV_NAME.transform((name): EnvVarSpec => ({ name, required: true })),
  z
    .object({
      name: ENV_NAME,
      description: z.string().max(1000).optional(),
      required: z.boolean().default(true),
      default: z.string().max(10_000).optional(),
    })
    .transform((v): EnvVarSpec => ({ ...v, ...(v.default !== undefined ? { default: v.default } : {}) })),
]);

const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;
const tpmjsTool = z
  .object({
    name: z.string().regex(EXPORT_NAME, 'must be a JavaScript export name').optional(),
    exportName: z.string().regex(EXPORT_NAME, 'must be a JavaScript export name').optional(),
    description: z.string().min(1).max(1000).optional(),
  })
  .refine((t) => t.name !== undefined || t.exportName !== undefined, { message: 'needs a name (or the legacy exportName)', path: ['name'] })
  .transform((t): ManifestTool => ({ exportName: (t.name ?? t.exportName)!, ...(t.description ? { description: t.description } : {}) }));

export const tpmjsField = z.object({
  category: tpmjsCategory,
  tools: z.array(tpmjsTool).max(200, 'lists more than 200 tools').default([]),
  env: z.array(tpmjsEnv).max(100).default([]),
});
