/**
 * The env a tool gets: its package's declared env vars, narrowed to the tool's declared `secrets` when it declares
 * them (toolshed.tools[].permissions.secrets). One rule for the API's checks, the MCP headers and the registry.
 */
import type { ToolRow } from './repos/tools.js';
import type { EnvVarSpec } from './types.js';

export function toolEnv(t: Pick<ToolRow, 'package_env' | 'permissions'>): EnvVarSpec[] {
  const secrets = t.permissions?.secrets;
  const all = t.package_env ?? [];
  return secrets ? all.filter((v) => secrets.includes(v.name)) : all;
}
