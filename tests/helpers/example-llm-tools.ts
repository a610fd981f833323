/**
 * The real example tools (examples/tools/*) as the LLM layer sees them: name, description and JSON Schema read from
 * each package's package.json and index.js, its health example, and a callTool that runs the tool's own execute()
 * in-process (standing in for the queue and sandbox, which the LLM layer does not know about).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { GenerateScenariosInput, ToolCallResult } from '../../core/llm/provider.js';

export type ExampleTool = GenerateScenariosInput['tools'][number] & { category: string };

const examplesDir = fileURLToPath(new URL('../../examples/tools', import.meta.url));

let cache: Promise<{ tools: ExampleTool[]; run: Map<string, (input: unknown) => Promise<unknown>> }> | undefined;

async function load() {
  const tools: ExampleTool[] = [];
  const run = new Map<string, (input: unknown) => Promise<unknown>>();
  for (const folder of readdirSync(examplesDir).sort()) {
    const pkg = JSON.parse(readFileSync(join(examplesDir, folder, 'package.json'), 'utf8'));
    const mod = await import(pathToFileURL(join(examplesDir, folder, pkg.main ?? 'index.js')).href);
    for (const t of pkg.toolshed.tools as { exportName: string; healthExample?: { params: Record<string, unknown> } }[]) {
      const impl = mod[t.exportName];
      tools.push({
        name: t.exportName,
        description: impl.description,
        inputSchema: impl.inputSchema,
        healthExample: t.healthExample ? { params: t.healthExample.params } : null,
        category: pkg.toolshed.category,
      });
      run.set(t.exportName, (input) => impl.execute(input, {}));
    }
  }
  return { tools, run };
}

export async function exampleLlmTools(): Promise<ExampleTool[]> {
  cache ??= load();
  return (await cache).tools;
}

/** Runs an example tool in-process; a throw becomes a TOOL_ERROR result, as the sandbox reports it. */
export async function runExampleTool(name: string, input: unknown): Promise<ToolCallResult> {
  cache ??= load();
  const started = Date.now();
  const execute = (await cache).run.get(name);
  if (!execute) return { error: { code: 'NOT_FOUND', message: `no tool ${name}` }, executionTimeMs: 0 };
  try {
    return { output: await execute(input), executionTimeMs: Date.now() - started };
  } catch (err) {
    return { error: { code: 'TOOL_ERROR', message: (err as Error).message }, executionTimeMs: Date.now() - started };
  }
}
