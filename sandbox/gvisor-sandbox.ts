/**
 * One gVisor sandbox, from boot to destruction: writes its bundle, starts `runsc run` attached to our pipes with the
 * guest waiting on stdin, is given its one package (`attach`, see package-view.ts), hands over requests, enforces the
 * wall-time limit from outside (`runsc kill`, then `runsc delete --force` if needed), and removes its bundle dir and
 * package view. One owner at a time: the pool, a one-shot call, or a reuse slot. If this process dies, the guest reads
 * EOF on stdin and exits, so orphaned sandboxes end by themselves.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildSpec, writeBundle } from './bundle.js';
import { executionLimit, openGuestChannel, type ChannelEnd, type ExitEnd, type GuestChannel, type GuestPipe } from './guest-channel.js';
import type { EgressNetwork, NetLease } from './egress.js';
import type { PackageViews, WritableOptions } from './package-view.js';
import { deleteForce, killContainer, spawnRun, type RunscOptions } from './runsc.js';

export interface SandboxSettings {
  runsc: RunscOptions;
  bundlesDir: string;
  rootfs: string;
  /** Where sandboxes get their package (without it, a sandbox has no /pkg and cannot be given one). */
  views?: PackageViews;
  memoryMb: number;
  pidsLimit: number;
  /** CPU limit of each sandbox, in cores (none when undefined). */
  cpus?: number;
  tmpSizeMb: number;
  /** Parent cgroup (relative to ours) of every sandbox's cgroup. */
  cgroupParent: string;
  /** Whether the rootfs holds a startup snapshot of the guest for `memoryMb`. */
  snapshot?: boolean;
  /** Extra guest arguments (e.g. `--warm=none`). */
  guestArgs?: string[];
  /** Egress mode: every sandbox gets a network namespace of its own from here. */
  egress?: EgressNetwork;
}

export type RunResult =
  | { kind: 'end'; end: ChannelEnd; durationMs: number; killedForMemory: boolean }
  | { kind: 'timeout'; durationMs: number }
  | { kind: 'aborted'; durationMs: number };

/** `runsc run` exits 128+9 when the sandbox is SIGKILLed; if we did not do it, the cgroup memory limit did. */
const SIGKILL_STATUS = 137;

export class GvisorSandbox {
  readonly id: string;
  readonly createdAt = Date.now();
  readonly ready: Promise<void>;
  /** Promise of the sandbox's end (for pools that must drop sandboxes dying while idle). */
  readonly exited: Promise<unknown>;
  executions = 0;
  private child: ChildProcess | undefined;
  private channel: GuestChannel | undefined;
  private lease: NetLease | undefined;
  private readonly bundleDir: string;
  /** The host dir of the package this sandbox was given, and where the guest finds it. */
  private pkg: { hostDir: string; inside: Promise<string> } | undefined;
  private destroying: Promise<void> | undefined;
  private killedByUs = false;
  private gone = false;
  private isReady = false;

  constructor(
    private readonly settings: SandboxSettings,
    private readonly opts: { onDestroyed?: (s: GvisorSandbox) => void } = {},
  ) {
    this.id = `ts-${randomBytes(6).toString('hex')}`;
    this.bundleDir = path.join(settings.bundlesDir, this.id);
    const started = settings.egress ? settings.egress.lease().then((lease) => this.start(lease)) : Promise.resolve(this.start());
    this.ready = started.then((channel) => channel.ready);
    this.ready.then(
      () => (this.isReady = true),
      () => {},
    );
    this.exited = started.then(
      (channel) => channel.exited,
      (err: unknown) => ({ kind: 'exit', code: null, signal: null, stderrTail: err instanceof Error ? err.message : String(err) }),
    );
    void this.exited.then(() => {
      this.gone = true;
    });
  }

  /** Writes the bundle and starts `runsc run` with the guest waiting on stdin. */
  private start(lease?: NetLease): GuestChannel {
    const { settings } = this;
    this.lease = lease;
    const spec = buildSpec({
      rootfs: settings.rootfs,
      pkgView: settings.views?.create(this.id),
      memoryMb: settings.memoryMb,
      pidsLimit: settings.pidsLimit,
      cpus: settings.cpus,
      tmpSizeMb: settings.tmpSizeMb,
      hostname: 'sandbox',
      cgroupsPath: `${settings.cgroupParent}/${this.id}`,
      snapshot: settings.snapshot,
      guestArgs: settings.guestArgs,
      netnsPath: lease?.nsPath,
      resolvConf: settings.egress?.resolvConf,
    });
    writeBundle(this.bundleDir, spec);
    this.child = spawnRun(settings.runsc, this.id, this.bundleDir);
    this.channel = openGuestChannel(this.child);
    return this.channel;
  }

  /** False once the sandbox process has ended or destruction began. */
  get alive(): boolean {
    return !this.gone && !this.destroying;
  }

  /**
   * Gives the sandbox the package at `hostDir` (absolute) and resolves to its path inside the sandbox. A sandbox
   * serves one package for its whole life: asking again for the same one is free, another one is refused. `writable`:
   * an MCP server's package, as an overlay it can write beside itself in (package-view.ts).
   */
  attach(hostDir: string, writable?: WritableOptions): Promise<string> {
    if (this.pkg) {
      if (this.pkg.hostDir !== hostDir) return Promise.reject(new Error(`sandbox ${this.id} already serves another package`));
      return this.pkg.inside;
    }
    const views = this.settings.views;
    if (!views) return Promise.reject(new Error(`sandbox ${this.id} has no package view`));
    this.pkg = { hostDir, inside: views.attach(this.id, hostDir, writable) };
    return this.pkg.inside;
  }

  /** The host dir of the package this sandbox serves, once it was given one. */
  get packageDir(): string | undefined {
    return this.pkg?.hostDir;
  }

  /** Hands over one request and waits for its result, the time limit, or the abort signal. */
  async run(request: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    this.executions += 1;
    const limit = executionLimit(timeoutMs, signal);
    try {
      if (!this.channel) throw new Error(`sandbox ${this.id} is not started`);
      const first = await Promise.race([this.channel.exchange(request), limit.reached]);
      if (first === 'timeout' || first === 'aborted') {
        await this.destroy();
        return { kind: first, durationMs: elapsed() };
      }
      const killedForMemory = first.kind === 'exit' && first.code === SIGKILL_STATUS && !this.killedByUs;
      return { kind: 'end', end: first, durationMs: elapsed(), killedForMemory };
    } finally {
      limit.clear();
    }
  }

  /** Starts a program whose stdio the guest hands over raw (op `mcp`, see mcp-run.ts); one per sandbox. */
  pipe(request: Record<string, unknown>): Promise<GuestPipe | ExitEnd> {
    if (!this.channel) return Promise.reject(new Error(`sandbox ${this.id} is not started`));
    this.executions += 1;
    return this.channel.pipe(request);
  }

  /**
   * Kills the sandbox if it still runs (after `graceMs` for a guest that is exiting by itself), waits for `runsc run`
   * to finish, and removes the bundle. Idempotent.
   */
  destroy(graceMs = 0): Promise<void> {
    this.destroying ??= (async () => {
      // A sandbox still booting cannot be killed by id until runsc has created its container: try as soon as it has
      // (a few hundred ms into the boot) rather than wait for the guest to come up, which takes seconds on a loaded
      // machine, longer than a stopping worker has (core/infra/bootstrap.ts STOP_DEADLINE_MS).
      const until = Date.now() + 15_000;
      if (!this.isReady) this.killedByUs = true;
      while (!this.isReady && !this.gone && Date.now() < until) {
        if (this.child && (await killContainer(this.settings.runsc, this.id).catch(() => false))) break;
        await Promise.race([this.ready.catch(() => {}), this.exited, delay(200)]);
      }
      if (!this.gone && graceMs > 0) await Promise.race([this.exited, delay(graceMs)]);
      if (!this.gone && this.child) {
        this.killedByUs = true;
        try {
          this.child.stdin?.end();
        } catch {
          // pipe already closed
        }
        await killContainer(this.settings.runsc, this.id).catch(() => {});
        const exited = await Promise.race([this.exited.then(() => true), delay(3000).then(() => false)]);
        if (!exited) {
          await deleteForce(this.settings.runsc, this.id).catch(() => {});
          this.child.kill('SIGKILL');
        }
      }
      await fs.rm(this.bundleDir, { recursive: true, force: true }).catch(() => {});
      // The package mount goes once the gofer serving it has exited with the sandbox (or been killed above).
      await this.pkg?.inside.catch(() => {});
      await this.settings.views?.remove(this.id).catch(() => {});
      // The network namespace goes once runsc has let go of it (after its exit, or after the forced delete).
      await this.lease?.release().catch(() => {});
      this.opts.onDestroyed?.(this);
    })();
    return this.destroying;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
