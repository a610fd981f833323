/**
 * The one place that invokes `runsc`. Global flags (state root, network, platform) are fixed per runner; containers
 * are started attached (`runsc run`) so their stdio pipes are ours, and force-deleted by id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { runCommand, type CommandResult } from './command.js';

export interface RunscOptions {
  binary: string;
  /** runsc state root (`--root`); keep the path short. */
  root: string;
  network: 'none' | 'sandbox';
  platform: string;
  /** Command prefix for `runsc run` (egress mode: a private mount namespace, see egress.ts). */
  launcher?: string[];
  /** Directory for runsc debug logs (off when undefined). */
  debugLogDir?: string;
}

/** The global flags of every runsc invocation under these options. */
export function runscArgs(o: RunscOptions): string[] {
  const args = ['--root', o.root, `--network=${o.network}`, `--platform=${o.platform}`];
  if (o.debugLogDir) args.push('--debug', `--debug-log=${o.debugLogDir}/`);
  return args;
}

/** Starts a container attached to our pipes; the process ends when the container does (and is then deleted). */
export function spawnRun(o: RunscOptions, id: string, bundleDir: string): ChildProcess {
  const argv = [o.binary, ...runscArgs(o), 'run', '--bundle', bundleDir, id];
  const [file, ...args] = o.launcher ? [...o.launcher, ...argv] : argv;
  return spawn(file, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {},
  });
}

export function runsc(o: RunscOptions, args: string[], timeoutMs = 10_000): Promise<CommandResult> {
  return runCommand(o.binary, [...runscArgs(o), ...args], { timeoutMs });
}

/** SIGKILLs a container's init; an attached `runsc run` then tears the sandbox down and deletes the container. */
export async function killContainer(o: RunscOptions, id: string): Promise<boolean> {
  return (await runsc(o, ['kill', id, 'KILL'])).code === 0;
}

/** Kills every process of a container and removes it (slow on a running container: ~5 s); succeeds when the container is already gone. */
export async function deleteForce(o: RunscOptions, id: string): Promise<void> {
  const r = await runsc(o, ['delete', '--force', id]);
  if (r.code !== 0 && !/does not exist|not found|no such/i.test(r.stderr)) {
    throw new Error(`runsc delete --force ${id} failed: ${r.stderr.trim().slice(0, 300)}`);
  }
}

/** Ids of the containers runsc knows about under this root. */
export async function listIds(o: RunscOptions): Promise<string[]> {
  const r = await runsc(o, ['list', '-quiet']);
  if (r.code !== 0) throw new Error(`runsc list failed: ${r.stderr.trim().slice(0, 300)}`);
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}
