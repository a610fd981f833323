/**
 * `registryExecuteTool`: runs a registry tool in the registry's sandbox (`POST /api/tools/execute/<package>/<tool>`)
 * and waits for its output. Every failure — the tool threw, the registry refused, the network broke — is thrown as
 * a RegistryToolError saying what happened, with the caller's env values scrubbed out.
 */
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import type { RegistryConfig } from './config.js';
import { describeDetails, isObject, readShapeA, RegistryToolError, secretScrubber } from './errors.js';
import { requestJson, type RegistryResponse } from './http.js';

export interface RegistryExecuteInput {
  /** `<package>::<tool_name>`, e.g. `@toolshed-examples/text-tools::slugify`. */
  toolId: string;
  params: Record<string, unknown>;
  env?: Record<string, string>;
}

export interface RegistryExecuteOutput {
  toolId: string;
  executionTimeMs: number;
  output: unknown;
}

/** `pkg::tool` or `@scope/pkg::tool`, and `pkg@1.2.3::tool` to pin a version; the package part may not contain `::`. */
const TOOL_ID = /^((?:@[^\s/:@]+\/)?[^\s/:@]+(?:@[^\s/:@]+)?)::([^\s/:]+)$/;

const executeInputSchema = z.object({
  toolId: z
    .string()
    .regex(TOOL_ID, 'must be "<package>::<tool_name>", e.g. "@scope/pkg::myTool"')
    .describe('The toolId returned by registrySearchTool: "<package>::<tool_name>" ("<package>@<version>::<tool_name>" pins a version)'),
  params: z.record(z.string(), z.unknown()).describe("The tool's parameters, as an object"),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe('Values of the env vars the tool requires (its requiredEnvVars), e.g. API keys; used for this call only'),
});

export function createExecuteTool(getConfig: () => RegistryConfig): Tool<RegistryExecuteInput, RegistryExecuteOutput> {
  return tool({
    description:
      'Run a tool from the Toolshed registry in its sandbox and return its output. Use a toolId from ' +
      'registrySearchTool; pass the values of its requiredEnvVars in env.',
    inputSchema: executeInputSchema,
    execute: (input, options) => execute(getConfig(), input, options?.abortSignal),
  });
}

async function execute(config: RegistryConfig, input: RegistryExecuteInput, signal?: AbortSignal): Promise<RegistryExecuteOutput> {
  const scrub = secretScrubber(input.env);
  const toolId = String(input.toolId);
  const action = `Executing ${toolId}`;
  const match = TOOL_ID.exec(toolId);
  if (!match) {
    throw new RegistryToolError(scrub(`${action} failed: toolId must be "<package>::<tool_name>"`), { code: 'VALIDATION_ERROR', toolId });
  }
  if (!isObject(input.params)) {
    throw new RegistryToolError(scrub(`${action} failed: params must be an object`), { code: 'VALIDATION_ERROR', toolId });
  }
  // The service splits at the last "/", so a scoped package keeps its slash; "@" (scope, pinned version) is legal in a path segment.
  const path = [...match[1].split('/'), match[2]].map((s) => encodeURIComponent(s).replace(/%40/g, '@')).join('/');
  const url = `${config.executorUrl}/api/tools/execute/${path}`;
  const body = { params: input.params, ...(input.env ? { env: input.env } : {}) };
  const res = await requestJson(config, { method: 'POST', url, body, signal, action, scrub, toolId });
  const ok = res.status === 200 && isObject(res.body) ? res.body : undefined;
  if (ok?.success === true) {
    return { toolId, executionTimeMs: typeof ok.executionTimeMs === 'number' ? ok.executionTimeMs : 0, output: ok.result };
  }
  throw failure(config, res, action, toolId, scrub);
}

function failure(config: RegistryConfig, res: RegistryResponse, action: string, toolId: string, scrub: (t: string) => string) {
  const e = readShapeA(res.body);
  const code = e.code ?? (res.status === 200 ? 'TOOL_ERROR' : 'ERROR');
  const message = e.message ?? 'no message';
  const details = e.details?.map((d) => ({ path: scrub(d.path), message: scrub(d.message) }));
  const fields = { status: res.status, code, details, executionId: e.executionId, toolId };
  if (res.status === 200) {
    const where = e.executionId ? ` (execution ${e.executionId})` : '';
    return new RegistryToolError(scrub(`${action} failed: the tool threw an error (${code}): ${message}${where}`), fields);
  }
  return new RegistryToolError(
    scrub(`${action} failed: HTTP ${res.status} ${code}: ${message}${describeDetails(message, e.details)}${hint(config, code, e.executionId)}`),
    fields,
  );
}

/** What to do next, for the codes where the registry's own message does not say. */
function hint(config: RegistryConfig, code: string, executionId?: string): string {
  switch (code) {
    case 'NOT_FOUND':
      return '. Use registrySearchTool to find a valid toolId';
    case 'UNAUTHORIZED':
      return '. Check the registry API key (REGISTRY_API_KEY)';
    case 'EXECUTION_TIMEOUT':
      return executionId ? `. It may still finish: GET ${config.executorUrl}/api/executions/${executionId}` : '';
    default:
      return '';
  }
}
