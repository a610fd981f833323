/** Discovery: the OpenAPI document of every operation (generated, see api/openapi.ts). */
import { z } from 'zod';
import { defineOperation, HANDLED, type Operation } from './define.js';

/** `document`: the OpenAPI document (api/operations/index.ts builds it from every operation, this one included). */
export function metaOperations(document: () => Record<string, unknown>): Operation[] {
  return [
    defineOperation({
      id: 'meta.openapi',
      method: 'get',
      path: '/api/openapi.json',
      summary: 'This document: every operation of the service as OpenAPI 3.1',
      tag: 'Discovery',
      auth: 'public',
      errorShape: 'A',
      responses: {
        200: { raw: { contentType: 'application/json', schema: z.object({ openapi: z.string() }).loose(), description: 'The OpenAPI 3.1 document' } },
      },
      errors: [],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'public, max-age=300');
        ctx.body = document();
        return HANDLED;
      },
    }),
  ];
}
