/**
 * Tools as the API shows them: the list item (the list, search, trending, a package import's answer) and the detail,
 * with the mappers from rows to them — shared by tools.ts and admin.ts, which must not import each other.
 */
import { z } from 'zod';
import { nullableTimestamp, timestamp, uuid } from './envelope.js';
import { annotationsOf, toolTokenCount } from '../mcp/tools.js';
import { CATEGORIES, HEALTH_STATUSES } from '../../core/types.js';
import { scrubHostPaths } from '../../core/text/host-paths.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { servedRisks } from '../../core/repos/tool-risks.js';
import { RISK_KINDS } from '../../core/packages/poisoning.js';

export function averageRating(sum: number, count: number): number | null {
  return count === 0 ? null : Math.round((sum / count) * 100) / 100;
}

export const category = z.enum(CATEGORIES);

const riskList = z.array(z.object({ kind: z.enum(RISK_KINDS), detail: z.string() }));

export const toolListItemSchema = z.object({
  id: uuid,
  name: z.string(),
  description: z.string(),
  qualityScore: z.number(),
  healthStatus: z.enum(HEALTH_STATUSES),
  package: z.object({
    npmPackageName: z.string(),
    category,
    env: z.array(z.string()).meta({ description: 'Names of the environment variables the tool requires' }),
  }),
  averageRating: z.number().nullable(),
  ratingCount: z.number().int(),
  risks: riskList.optional().meta({
    description:
      "Hidden instructions found in its descriptions at import (invisible or tag Unicode, instructions aimed at the model, sensitive data asked for, another tool shadowed; docs/security.md); left out of list items when none (the contract's item shape), [] on the record",
  }),
});

export const toolDetailSchema = toolListItemSchema.extend({
  icons: z
    .array(
      z.object({
        src: z.string(),
        mimeType: z.string().optional(),
        sizes: z.array(z.string()).optional(),
        theme: z.enum(['light', 'dark']).optional(),
      }),
    )
    .optional()
    .meta({
      description:
        "An imported MCP server's tool: its icons (MCP 2025-11-25 `icons`; its server's when it has none of its own), https or data: PNG/JPEG/SVG/WebP only, as recorded at import; absent otherwise. Beyond the contract (docs/mcp.md)",
    }),
  risks: riskList.meta({ description: 'Hidden instructions found in its descriptions at import (docs/security.md); [] when none or cleared by the admin' }),
  slug: z.string().meta({ description: '`<package>/<tool>`' }),
  toolId: z.string().meta({ description: '`<package>::<tool>`' }),
  inputSchema: z.record(z.string(), z.unknown()).meta({ description: "The tool's input as JSON Schema" }),
  healthError: z.string().nullable().meta({ description: 'Why the tool is BROKEN (null otherwise)' }),
  lastHealthCheckAt: nullableTimestamp,
  toolsChanged: z
    .object({
      detectedAt: z.string(),
      version: z.string(),
      added: z.array(z.string()),
      removed: z.array(z.string()),
      changed: z.array(z.object({ tool: z.string(), fields: z.array(z.string()) })),
    })
    .nullable()
    .meta({
      description:
        "An MCP server's tools/list changed within this version at a health check (tools added, removed, or whose description or schemas changed), until the package is imported again; null otherwise",
    }),
  executionCount: z.number().int(),
  tokenCount: z.number().int().meta({ description: "Tokens (o200k_base) of the tool's MCP definition" }),
  outputSchema: z
    .record(z.string(), z.unknown())
    .nullable()
    .meta({ description: "The tool's declared output as JSON Schema (MCP `structuredContent` follows it), or null" }),
  permissions: z
    .object({
      readOnly: z.boolean().optional(),
      destructive: z.boolean().optional(),
      idempotent: z.boolean().optional(),
      network: z.boolean().optional(),
      secrets: z.array(z.string()).optional(),
    })
    .nullable()
    .meta({ description: "What the package declares the tool does (null: nothing declared, so no network and every env var of the package's `env`)" }),
  annotations: z
    .object({
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean(),
    })
    .meta({
      description:
        'The MCP tool annotations clients see: only the hints its package or server declares (none: left out), openWorldHint from network; never readOnlyHint for a tool with risks',
    }),
  package: toolListItemSchema.shape.package.extend({
    version: z.string(),
    official: z.boolean(),
    envVars: z.array(z.object({ name: z.string(), required: z.boolean(), description: z.string().nullable() })),
  }),
  createdAt: timestamp,
});

export function toToolListItem(t: ToolRow): z.infer<typeof toolListItemSchema> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    qualityScore: t.quality_score,
    healthStatus: t.health_status,
    package: { npmPackageName: t.package_name, category: t.package_category, env: (t.package_env ?? []).filter((v) => v.required).map((v) => v.name) },
    averageRating: averageRating(t.rating_sum, t.rating_count),
    ratingCount: t.rating_count,
    ...(servedRisks(t).length > 0 ? { risks: servedRisks(t) } : {}),
  };
}

export function toToolDetail(t: ToolRow): z.infer<typeof toolDetailSchema> {
  const item = toToolListItem(t);
  return {
    ...item,
    risks: servedRisks(t),
    slug: `${t.package_name}/${t.name}`,
    toolId: `${t.package_name}::${t.name}`,
    inputSchema: t.input_schema,
    // Scrubbed when stored (worker/health.ts); again here for rows stored before that.
    healthError: t.health_status === 'BROKEN' && t.health_error ? scrubHostPaths(t.health_error, t.package_install_path) : null,
    lastHealthCheckAt: t.last_health_check_at ? new Date(t.last_health_check_at).toISOString() : null,
    toolsChanged: t.tools_changed ?? null,
    executionCount: t.execution_count,
    tokenCount: toolTokenCount(t),
    outputSchema: t.output_schema ?? null,
    permissions: t.permissions ?? null,
    annotations: annotationsOf(t) as z.infer<typeof toolDetailSchema>['annotations'],
    package: {
      ...item.package,
      version: t.package_version,
      official: t.package_official,
      envVars: (t.package_env ?? []).map((v) => ({ name: v.name, required: v.required, description: v.description ?? null })),
    },
    createdAt: new Date(t.created_at).toISOString(),
  };
}
