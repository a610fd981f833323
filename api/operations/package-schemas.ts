/** Schemas shared by the import operations (admin import, publishing): what a request may say, how tools were found. */
import { z } from 'zod';
import { CATEGORIES } from '../../core/types.js';
import { AppError, errors } from '../../core/infra/errors.js';
import { scrubHostPaths } from '../../core/text/host-paths.js';
import type { Discovery } from '../../core/packages/discovery.js';
import type { PackageImportRow } from '../../core/repos/package-imports.js';

/**
 * What an import request may say beyond its source (admin import and publishing alike): `category` and `env` for a
 * package that does not say them itself (no manifest, a TPMJS field without env), and `kind`, `args`, `network`,
 * `serverJson` for an MCP server (core/packages/mcp-server.ts).
 */
export { importOptionsShape } from '../../core/packages/mcp-server.js';

/** `mcp` for an MCP server, `tools` for every other package. */
export const packageKindSchema = z.enum(['tools', 'mcp']);

/** The package an import answers with (POST /api/packages, POST /api/admin/packages). */
export const importedPackageSchema = z.object({
  name: z.string(),
  version: z.string(),
  category: z.enum(CATEGORIES),
  kind: packageKindSchema,
  publisher: z.string().nullable().meta({ description: "Username of the package's publisher; null for a package the admin imported" }),
});
export const kindOf = (pkg: { manifest?: { format?: string } | null }): z.infer<typeof packageKindSchema> => (pkg.manifest?.format === 'mcp' ? 'mcp' : 'tools');

export const discoverySchema = z
  .object({
    tools: z.array(
      z.object({
        name: z.string(),
        exportName: z.string().meta({
          description:
            'The export, `<export>#<key>` for a member of what it yields, or for a toolkit (`entry`, `options`) JSON `{"entry"?, "export", "args"?, "key"?}`',
        }),
        how: z.enum([
          'ai-sdk-tool',
          'factory',
          'factory-record',
          'record',
          'agentic-function',
          'agentic-provider',
          'langchain-tool',
          'langchain-class',
          'toolkit',
        ]),
      }),
    ),
    envRead: z.array(z.string()).meta({ description: 'Credential-like variables the package read while loading' }),
    notes: z.array(z.string()).meta({ description: 'Exports that could not be examined, and why' }),
  })
  .nullable()
  .meta({ description: 'How the tools of a package that lists none were found; null when the package lists its tools' });

export function discoveryOf(pkg: { manifest?: unknown }): z.infer<typeof discoverySchema> {
  const d = (pkg.manifest as { discovery?: Discovery } | undefined)?.discovery;
  return d ? { tools: d.tools as NonNullable<z.infer<typeof discoverySchema>>['tools'], envRead: d.envRead, notes: d.notes } : null;
}

/**
 * The error a failed import answers with: the package's own fault is the 400 it recorded; an unexpected failure's text
 * names host paths (the cache, a staging folder), so the answer keeps only its gist.
 */
export function importFailure(e: NonNullable<PackageImportRow['error']>): AppError {
  if (e.code === 'VALIDATION_ERROR') return errors.validation(e.message, e.details);
  // Who may record the name, and a recorded version from other bytes (worker/import/record.ts).
  if (e.code === 'FORBIDDEN') return errors.forbidden(e.message);
  if (e.code === 'CONFLICT') return errors.conflict(e.message);
  return new AppError('INTERNAL', 500, `Import failed: ${scrubHostPaths(e.message)}`);
}
