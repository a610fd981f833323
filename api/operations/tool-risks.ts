/** The admin clears a tool's risks (core/packages/poisoning.ts) as a false alarm; they stay cleared while its texts do not change. */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { ok } from './envelope.js';
import { toolDetailSchema, toToolDetail } from './tool-schemas.js';
import { errors } from '../../core/infra/errors.js';
import { clearToolRisks } from '../../core/repos/tool-risks.js';
import { findToolByRef, refreshQualityScore } from '../../core/repos/tools.js';
import { RISK_KINDS } from '../../core/packages/poisoning.js';

const BODY = [400, 413, 415];

export const toolRiskOperations: Operation[] = [
  defineOperation({
    tag: 'Admin',
    errorShape: 'A',
    auth: 'admin',
    id: 'admin.clearToolRisks',
    method: 'post',
    path: '/api/admin/tools/:id/risks/clear',
    summary: "Clears a tool's risks as a false alarm",
    description:
      'The tool is served without its risks (its record, search, MCP `tools/list` `_meta`; `readOnlyHint` as declared again) and ranks as its peers, until its descriptions change: a changed text is checked afresh at its next import.',
    params: z.object({ id: z.uuid().meta({ description: "The tool's id" }) }),
    responses: { 200: ok(z.object({ cleared: z.array(z.object({ kind: z.enum(RISK_KINDS), detail: z.string() })), tool: toolDetailSchema })) },
    errors: [...BODY, 404],
    handler: async (_ctx, deps, { params }) => {
      const done = await clearToolRisks(deps.db, params.id);
      if (!done) throw errors.notFound('Tool', params.id);
      await refreshQualityScore(deps.db, params.id);
      const tool = (await findToolByRef(deps.db, params.id))!;
      return { success: true, data: { cleared: done.cleared, tool: toToolDetail(tool) } };
    },
  }),
];
