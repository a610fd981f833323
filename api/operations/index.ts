/**
 * Every operation of the HTTP API, declared as data (api/operations/define.ts), in mount order. The router, response
 * serialisation and the OpenAPI document all come from this list.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Operation } from './define.js';
import { metaOperations } from './meta.js';
import { buildOpenApi } from '../openapi.js';
import { authOperations } from './auth.js';
import { scenarioOperations } from './scenarios.js';
import { scenarioRunOperations } from './scenario-runs.js';
import { scenarioBatchOperations } from './scenario-batches.js';
import { scenarioBatchCompareOperations } from './scenario-batch-compare.js';
import { collectionOperations } from './collections.js';
import { mcpOperations } from './mcp.js';
import { mcpEnvOperations } from './mcp-env.js';
import { agentOperations } from './agents.js';
import { healthOperations } from './health.js';
import { adminOperations } from './admin.js';
import { toolRiskOperations } from './tool-risks.js';
import { operatorOperations } from './operator.js';
import { keyOperations } from './keys.js';
import { oauthOperations } from './oauth.js';
import { toolDetailOperations, toolOperations } from './tools.js';
import { reviewOperations } from './reviews.js';
import { toolStatsOperations } from './tool-stats.js';
import { executionOperations } from './executions.js';
import { registryOperations } from './registry.js';
import { packageOperations } from './packages.js';

/** The service's version, from the package.json above this file (in the sources, or in dist/). */
function serviceVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
}
const VERSION = serviceVersion();

const DECLARED: Operation[] = [
  ...authOperations,
  ...scenarioOperations,
  ...scenarioRunOperations,
  ...scenarioBatchOperations,
  ...scenarioBatchCompareOperations,
  ...collectionOperations,
  ...mcpOperations,
  ...mcpEnvOperations,
  ...agentOperations,
  ...healthOperations,
  ...adminOperations,
  ...toolRiskOperations,
  ...operatorOperations,
  ...packageOperations,
  ...keyOperations,
  ...oauthOperations,
  ...executionOperations,
  ...toolOperations,
  ...reviewOperations,
  ...toolStatsOperations,
  // Last among `/api/tools/...`: `*ref` matches the paths above too.
  ...toolDetailOperations,
  ...registryOperations,
];

export const OPERATIONS: readonly Operation[] = [...DECLARED, ...metaOperations(() => openApiDocument())];

let document: Record<string, unknown> | undefined;
/** The OpenAPI document of every operation, built once per process: served at /api/openapi.json, and by `npm test`
 * once per run for the check of every test response (tests/helpers/contract.ts). */
export function openApiDocument(): Record<string, unknown> {
  document ??= buildOpenApi(OPERATIONS, { version: VERSION });
  return document;
}
