/**
 * Runs an MCP server's operation in a sandbox, for both runners: `open` gives the guest's pipe to a freshly started
 * server (guest/mcp-pipe.cjs), the whole operation is bounded by its time limit (and abort signal), and the caller
 * destroys the sandbox afterwards, whatever happened: every sandbox serves one describe or one call.
 */
import { executionLimit, lastLines, type ExitEnd, type GuestPipe } from './guest-channel.js';
import { callServerTool, listServerTools } from './mcp-client.js';
import type { DescribeOutcome, ExecuteOutcome, ExecuteRequest, McpLaunch } from './types.js';

export type OpenPipe = () => Promise<GuestPipe | ExitEnd | Error>;

/** The guest request that starts the server (the runner adds `pkgDir`). */
export function mcpRequest(launch: McpLaunch, env: Record<string, string>): Record<string, unknown> {
  const inGuest = launch.inGuest === true;
  // The one-file bundle (mcp-bundle.ts) is loaded in the guest's process only; a child `node` runs the bin.
  const files = launch.files?.filter((name) => Object.hasOwn(env, name)) ?? [];
  return {
    op: 'mcp',
    bin: launch.bin,
    args: launch.args ?? [],
    env,
    inGuest,
    ...(inGuest && launch.bundle ? { bundle: launch.bundle } : {}),
    ...(files.length ? { files } : {}),
  };
}

async function bounded<T>(open: OpenPipe, timeoutMs: number, signal: AbortSignal | undefined, use: (pipe: GuestPipe) => Promise<T>) {
  const limit = executionLimit(timeoutMs, signal);
  try {
    const work = (async () => {
      const pipe = await open();
      if (pipe instanceof Error) return { error: `cannot start a sandbox: ${pipe.message}` };
      if ('kind' in pipe) return { error: `the sandbox ended before the server started: ${lastLines(pipe.stderrTail)}` };
      return { value: await use(pipe) };
    })();
    const first = await Promise.race([work, limit.reached]);
    return first;
  } finally {
    limit.clear();
  }
}

/** Lists the server's tools; `exportNames` (a health check's tool) that it no longer lists are `missing`. */
export async function describeMcp(open: OpenPipe, timeoutMs: number, exportNames?: string[]): Promise<DescribeOutcome> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  let opened: GuestPipe | undefined;
  const r = await bounded(open, timeoutMs, undefined, (pipe) => listServerTools((opened = pipe), timeoutMs));
  if (r === 'timeout' || r === 'aborted') {
    // What it said meanwhile tells why (a server that listens on HTTP unless told `--stdio`, one stuck on a prompt).
    const stderr = opened ? lastLines(opened.stderrTail()) : '';
    return { kind: 'timeout', durationMs: durationMs(), ...(stderr ? { stderr } : {}) };
  }
  if ('error' in r) return { kind: 'sandbox_error', message: r.error!, durationMs: durationMs() };
  const d = r.value!;
  if (d.kind !== 'ok' || !exportNames) return d;
  const listed = new Set(d.tools.map((t) => t.exportName));
  return { ...d, missing: exportNames.filter((n) => !listed.has(n)) };
}

export async function executeMcp(
  open: OpenPipe,
  req: { exportName: string; params: unknown; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal } & Pick<
    ExecuteRequest,
    'mcpOp' | 'onProgress'
  >,
): Promise<ExecuteOutcome> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const r = await bounded(open, req.timeoutMs, req.signal, (pipe) =>
    callServerTool(pipe, req.exportName, req.params, req.env, req.timeoutMs, { op: req.mcpOp, onProgress: req.onProgress }),
  );
  if (r === 'timeout') return { kind: 'timeout', durationMs: durationMs() };
  if (r === 'aborted') return { kind: 'sandbox_error', message: 'aborted', durationMs: durationMs() };
  if ('error' in r) return { kind: 'sandbox_error', message: r.error!, durationMs: durationMs() };
  return r.value!;
}
