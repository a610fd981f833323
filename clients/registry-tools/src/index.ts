/**
 * @toolshed/registry-tools — two AI SDK tools that let any agent use a Toolshed registry: `registrySearchTool` finds
 * tools, `registryExecuteTool` runs one in the registry's sandbox. The ready-made pair reads `REGISTRY_API_URL`,
 * `REGISTRY_EXECUTOR_URL` and `REGISTRY_API_KEY` when called; `createRegistryTools` takes them as options instead.
 */
import type { Tool } from 'ai';
import { configFromEnv, resolveOptions, type RegistryConfig, type RegistryToolsOptions } from './config.js';
import { createExecuteTool, type RegistryExecuteInput, type RegistryExecuteOutput } from './execute.js';
import { createSearchTool, type RegistrySearchInput, type RegistrySearchOutput } from './search.js';

export { DEFAULT_API_URL, type FetchFunction, type RegistryToolsOptions } from './config.js';
export { RegistryToolError, type ErrorDetail } from './errors.js';
export { CATEGORIES, type Category, type RegistrySearchInput, type RegistrySearchOutput, type RegistryToolSummary } from './search.js';
export type { RegistryExecuteInput, RegistryExecuteOutput } from './execute.js';

/** A type, not an interface, so that it is assignable to the AI SDK's `ToolSet` (`tools: createRegistryTools()`). */
export type RegistryTools = {
  registrySearchTool: Tool<RegistrySearchInput, RegistrySearchOutput>;
  registryExecuteTool: Tool<RegistryExecuteInput, RegistryExecuteOutput>;
};

function buildTools(getConfig: () => RegistryConfig): RegistryTools {
  return { registrySearchTool: createSearchTool(getConfig), registryExecuteTool: createExecuteTool(getConfig) };
}

/** Tools bound to explicit options; the environment is not read. Missing options get their defaults. */
export function createRegistryTools(options: RegistryToolsOptions = {}): RegistryTools {
  const config = resolveOptions(options);
  return buildTools(() => config);
}

const fromEnv = buildTools(configFromEnv);

/** Searches the registry configured by `REGISTRY_API_URL` (default: the public registry). */
export const registrySearchTool: RegistryTools['registrySearchTool'] = fromEnv.registrySearchTool;

/** Runs a registry tool on `REGISTRY_EXECUTOR_URL` (default: `REGISTRY_API_URL`), with `REGISTRY_API_KEY` if set. */
export const registryExecuteTool: RegistryTools['registryExecuteTool'] = fromEnv.registryExecuteTool;
