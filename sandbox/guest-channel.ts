/**
 * The host side of the guest protocol (see guest/main.cjs), shared by both runners: watches a guest's stdout for the
 * ready marker and the one result line, caps what it reads, keeps a short stderr tail for diagnosing crashes, and
 * maps what happened to the closed outcome unions of types.ts. Nothing here knows how the guest was started.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { stripVTControlCharacters } from 'node:util';
import type { DescribedTool, DescribeOutcome, ExecuteOutcome } from './types.js';
import { redactText } from '../core/executions/redaction.js';

export const READY_MARKER = '@@toolshed-ready';
export const RESULT_MARKER = '@@toolshed-result';
/** The guest refuses outputs over 1 MiB; anything much bigger on stdout means it did not get the chance. */
export const STDOUT_CAP_BYTES = 1024 * 1024 + 64 * 1024;
const STDERR_TAIL_BYTES = 8 * 1024;

export interface GuestResult {
  ok: boolean;
  output?: unknown;
  tools?: DescribedTool[];
  missing?: string[];
  notes?: string[];
  envRead?: string[];
  code?: string;
  error?: string;
  /** Reuse mode: the execution left something the guest could not clean up; the sandbox must not serve again. */
  retire?: boolean;
}

/** How one request ended, as seen from outside. */
export type ChannelEnd =
  | { kind: 'result'; result: GuestResult }
  | { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null; stderrTail: string }
  | { kind: 'overflow' };

export type ExitEnd = Extract<ChannelEnd, { kind: 'exit' }>;

export interface GuestChannel {
  /** Resolves when the guest is booted and waiting; rejects with the stderr tail if it dies first. */
  readonly ready: Promise<void>;
  /** Resolves when the guest process has exited and its pipes are closed. */
  readonly exited: Promise<ExitEnd>;
  /**
   * Sends one request (with a fresh nonce) and resolves with its result line, the guest's exit, or `overflow` when
   * it prints too much. One request at a time.
   */
  exchange(request: Record<string, unknown>): Promise<ChannelEnd>;
  /**
   * Sends one request whose answer is a raw pipe (op `mcp`, guest/mcp-pipe.cjs): resolves, once the guest says the
   * pipe is open, with the pipe, or with the guest's exit. Afterwards the channel is the pipe's alone.
   */
  pipe(request: Record<string, unknown>): Promise<GuestPipe | ExitEnd>;
}

export const PIPE_MARKER = '@@toolshed-pipe';

/** A guest's stdio handed over raw: what the host writes goes to the program the guest started, and back. */
export interface GuestPipe {
  write(data: string): void;
  /** Receives everything the program writes to stdout from now on (what came with the marker first). */
  onData(listener: (chunk: string) => void): void;
  /** The guest's end (the program exited, or the sandbox was killed), with the tail of what it wrote to stderr. */
  readonly exited: Promise<ExitEnd>;
  stderrTail(): string;
}

interface Pending {
  prefix: string;
  resolve: (end: ChannelEnd) => void;
}

export function openGuestChannel(child: ChildProcess): GuestChannel {
  let stdout = '';
  let stdoutBytes = 0;
  let stderrTail = '';
  let isReady = false;
  let pending: Pending | undefined;
  // Pipe mode: the marker awaited, then where stdout goes.
  let pipeWait: { marker: string; resolve: (p: GuestPipe | ExitEnd) => void } | undefined;
  let piped: ((chunk: string) => void) | undefined;
  let pipeBacklog = '';
  let exitEnd: ExitEnd | undefined;
  let markReady!: () => void;
  let failReady!: (err: Error) => void;
  let markExited!: (end: ExitEnd) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {});
  const exited = new Promise<ExitEnd>((resolve) => (markExited = resolve));

  const settle = (end: ChannelEnd) => {
    const p = pending;
    pending = undefined;
    p?.resolve(end);
  };
  const scan = () => {
    if (!isReady) {
      const at = stdout.indexOf(`${READY_MARKER}\n`);
      if (at !== -1) {
        isReady = true;
        stdout = stdout.slice(at + READY_MARKER.length + 1);
        markReady();
      }
    }
    if (pipeWait) {
      const at = stdout.indexOf(pipeWait.marker);
      if (at === -1) return;
      const rest = stdout.slice(at + pipeWait.marker.length);
      stdout = '';
      const open = pipeWait.resolve;
      pipeWait = undefined;
      pipeBacklog = rest;
      piped = (chunk) => {
        pipeBacklog += chunk;
      };
      open(guestPipe);
      return;
    }
    if (!pending) return;
    const at = stdout.indexOf(pending.prefix);
    const eol = at === -1 ? -1 : stdout.indexOf('\n', at);
    if (eol === -1) return;
    const line = stdout.slice(at + pending.prefix.length, eol);
    stdout = stdout.slice(eol + 1);
    stdoutBytes = Buffer.byteLength(stdout);
    try {
      settle({ kind: 'result', result: JSON.parse(line) as GuestResult });
    } catch {
      settle({ kind: 'exit', code: null, signal: null, stderrTail: 'unparseable result line' });
    }
  };

  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    if (piped) return piped(chunk);
    stdoutBytes += Buffer.byteLength(chunk);
    if (stdoutBytes > STDOUT_CAP_BYTES) {
      stdout = '';
      return settle({ kind: 'overflow' });
    }
    stdout += chunk;
    scan();
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  child.stdin?.on('error', () => {});
  const onGone = (code: number | null, signal: NodeJS.Signals | null, why?: string) => {
    if (exitEnd) return;
    exitEnd = { kind: 'exit', code, signal, stderrTail: why ?? stderrTail };
    failReady(new Error(`guest ended before it was ready (code ${code}, signal ${signal}): ${lastLines(exitEnd.stderrTail)}`));
    settle(exitEnd);
    pipeWait?.resolve(exitEnd);
    pipeWait = undefined;
    markExited(exitEnd);
  };
  child.on('error', (err) => onGone(null, null, err.message));
  child.on('close', (code, signal) => onGone(code, signal));

  const guestPipe: GuestPipe = {
    write: (data) => void child.stdin?.write(data),
    onData(listener) {
      piped = listener;
      const backlog = pipeBacklog;
      pipeBacklog = '';
      if (backlog) listener(backlog);
    },
    exited,
    stderrTail: () => stderrTail,
  };

  return {
    ready,
    exited,
    pipe(request) {
      if (pending || pipeWait || piped) throw new Error('guest channel: one request at a time');
      if (exitEnd) return Promise.resolve(exitEnd);
      const nonce = randomBytes(12).toString('hex');
      const opened = new Promise<GuestPipe | ExitEnd>((resolve) => (pipeWait = { marker: `${PIPE_MARKER} ${nonce}\n`, resolve }));
      child.stdin?.write(`${JSON.stringify({ ...request, nonce })}\n`);
      return opened;
    },
    exchange(request) {
      if (pending) throw new Error('guest channel: one request at a time');
      if (exitEnd) return Promise.resolve(exitEnd);
      const nonce = randomBytes(12).toString('hex');
      const done = new Promise<ChannelEnd>((resolve) => (pending = { prefix: `${RESULT_MARKER} ${nonce} `, resolve }));
      stdoutBytes = Buffer.byteLength(stdout);
      child.stdin?.write(`${JSON.stringify({ ...request, nonce })}\n`);
      return done;
    },
  };
}

/**
 * What a program's stderr says at its end, for an error message: the lines that say something (colour codes, blank
 * lines, stack frames `    at …`, the caret under a thrown line, Node's `Node.js v20…` trailer and lines of only
 * brackets and commas are left out), from the last `n` of them, or from the last line that reports an error if that
 * is earlier, so that a report printed over many lines (a validation library's JSON list of issues) is read from its
 * start ("Server error: [ | … "message": "Elasticsearch URL cannot be empty" …"), not from its closing brackets. At
 * most 500 characters, from the start.
 */
export function lastLines(text: string, n = 3): string {
  const said = stripVTControlCharacters(text)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => !/^[\s[\]{}(),]*$/.test(l) && !/^\s+at \S/.test(l) && !/^\s*\^+$/.test(l) && !/^Node\.js v\d+/.test(l));
  let from = Math.max(0, said.length - n);
  // A line that is an error (`Error: …`, `TypeError: …`, `fatal: …`) before one that only mentions one: a Go program's
  // `Error: no current-context is set` is followed by its usage, whose flags speak of "the standard error stream".
  const isError = (l: string) => /^\s*(?:\w*Error|error|ERROR|fatal|FATAL|panic)(?:\s*\[[^\]]*\])?:/.test(l);
  const mentionsError = (l: string) => /\b(error|exception|fatal)\b/i.test(l);
  const at = findLastIndex(said, isError);
  const mention = at >= 0 ? at : findLastIndex(said, mentionsError);
  if (mention >= 0) from = Math.min(from, mention);
  return said
    .slice(from)
    .map((l) => l.trim())
    .join(' | ')
    .slice(0, 500);
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

const HEAP_OOM = /heap out of memory|Reached heap limit|Allocation failed - process out of memory|FatalProcessOutOfMemory/;

/** Replaces env values (as is and encoded) in a message, so that no error text carries a secret. */
export function redact(message: string, env: Record<string, string> | undefined): string {
  return redactText(message, env);
}

/** Whether an exit without result means the sandbox ran out of memory (V8 heap abort, or a memory-limit kill). */
function exitWasOom(end: ExitEnd, killedForMemory: boolean): boolean {
  return HEAP_OOM.test(end.stderrTail) || killedForMemory;
}

/**
 * Signals a process raises on itself when its code crashes (a failed assertion or `process.abort()`, a bad memory
 * access, an illegal instruction, a division trap, a breakpoint, a bad system call): the tool's failure, not ours. We
 * never send these; our own kills (timeout, memory limit, shutdown) are SIGKILL/SIGTERM and are told apart before this.
 */
const CRASH_SIGNALS: Record<string, number> = { SIGABRT: 6, SIGSEGV: 11, SIGBUS: 7, SIGILL: 4, SIGFPE: 8, SIGTRAP: 5, SIGSYS: 31 };

/**
 * The crash signal a guest died of: seen directly (the process runner), or as exit status 128 + signal number
 * (runsc exits with the status of the container's process, a signalled one as 128 + its number).
 */
export function crashSignal(end: ExitEnd): string | undefined {
  if (end.signal && end.signal in CRASH_SIGNALS) return end.signal;
  if (end.code === null) return undefined;
  return Object.entries(CRASH_SIGNALS).find(([, n]) => end.code === 128 + n)?.[0];
}

function crashMessage(end: ExitEnd): string {
  const how = end.signal ? `signal ${end.signal}` : `code ${end.code}`;
  return `the sandbox ended without a result (${how})${end.stderrTail ? `: ${lastLines(end.stderrTail)}` : ''}`;
}

/** How deep a tool's output may nest arrays and objects (real outputs stay far below; see toExecuteOutcome). */
export const MAX_OUTPUT_DEPTH = 512;

/** The nesting depth of a parsed JSON value (a scalar is 0), measured without recursion. */
export function nestingDepth(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) max = depth + 1;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return max;
}

export function toExecuteOutcome(end: ChannelEnd, durationMs: number, env: Record<string, string>, killedForMemory = false): ExecuteOutcome {
  if (end.kind === 'overflow') return { kind: 'output_too_large', durationMs };
  if (end.kind === 'exit') {
    if (exitWasOom(end, killedForMemory)) return { kind: 'oom', durationMs };
    // A tool that crashes its process fails like one that throws: it is not run again (only our failures are).
    const crashed = crashSignal(end);
    if (crashed) return { kind: 'tool_error', message: `The tool crashed its process (${crashed}) and returned no result`, durationMs };
    return { kind: 'sandbox_error', message: redact(crashMessage(end), env), durationMs };
  }
  const r = end.result;
  if (r.ok) {
    // Deeper than this, JSON.stringify (storing the result, answering the caller) overflows the stack: the tool's
    // failure, told once, instead of a worker error that would run it again.
    if (nestingDepth(r.output) > MAX_OUTPUT_DEPTH) {
      return { kind: 'tool_error', message: `The tool's output is nested more than ${MAX_OUTPUT_DEPTH} levels deep`, durationMs };
    }
    return { kind: 'ok', output: r.output ?? null, durationMs };
  }
  const message = redact(r.error ?? 'unknown error', env);
  switch (r.code) {
    case 'oom':
      return { kind: 'oom', durationMs };
    case 'output_too_large':
      return { kind: 'output_too_large', durationMs };
    case 'load_error':
      return { kind: 'tool_error', message: `cannot load the package: ${message}`, durationMs };
    default:
      return { kind: 'tool_error', message, durationMs };
  }
}

export function toDescribeOutcome(end: ChannelEnd, durationMs: number): DescribeOutcome {
  if (end.kind === 'overflow') return { kind: 'sandbox_error', message: 'describe output too large', durationMs };
  if (end.kind === 'exit') {
    if (exitWasOom(end, false)) return { kind: 'load_error', message: 'out of memory while loading the package', durationMs };
    return { kind: 'sandbox_error', message: crashMessage(end), durationMs };
  }
  const r = end.result;
  if (r.ok) return { kind: 'ok', tools: r.tools ?? [], missing: r.missing ?? [], durationMs, ...(r.notes ? { notes: r.notes, envRead: r.envRead ?? [] } : {}) };
  return { kind: 'load_error', message: r.error ?? 'unknown error', durationMs };
}

/** Resolves with `timeout` after timeoutMs, or `aborted` when the signal fires; `clear()` releases both. */
export function executionLimit(timeoutMs: number, signal?: AbortSignal): { reached: Promise<'timeout' | 'aborted'>; clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const reached = new Promise<'timeout' | 'aborted'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    onAbort = () => resolve('aborted');
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  return {
    reached,
    clear() {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    },
  };
}
