/** Schemas shared by the import operations (admin import, publishing): what a request may say, how tools were found. */
import { z } from 'zod';
import type { Discovery } from '../../core/packages/discovery.js';
import { CATEGORIES } from '../../core/types.js';

/** For a package that does not say them itself (no manifest, a TPMJS field without env): its category and env. */
export const importOptionsShape = {
  category: z.enum(CATEGORIES).optional().meta({ description: 'Category of a package that names none' }),
  env: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE name'),
        description: z.string().max(1000).optional(),
        required: z.boolean().default(true),
      }),
    )
    .max(50)
    .optional()
    .meta({ description: 'Environment variables the package reads (declared: they get placeholders while it is described)' }),
};

export const discoverySchema = z
  .object({
    tools: z.array(
      z.object({
        name: z.string(),
        exportName: z.string().meta({ description: 'The export, or `<export>#<key>` for a member of what it yields' }),
        how: z.enum(['ai-sdk-tool', 'factory', 'factory-record', 'record', 'agentic-function', 'agentic-provider']),
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
