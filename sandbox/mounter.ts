/**
 * Read-only bind mounts on the host, fast enough for an execution's hand-over (package-view.ts). Spawning `mount`
 * from this (large) Node process costs a fork and an exec per call: 3 ms on an idle machine and 15–30 ms on a busy
 * one, on the warm path of every execution. So one long-lived helper makes the mount(2) and umount2(2) calls itself,
 * answering one request line after the other: perl (perl-base is essential on Debian) with its `syscall`, which costs
 * well under a millisecond per mount. Where it cannot run (no perl, an architecture whose syscall numbers are not
 * listed here) or when it dies, `mount`/`umount` are spawned instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { runCommand, systemBinary } from './command.js';

export interface Mounter {
  /** Binds `source` at `target` read-only, nosuid, nodev (never left writable: a failed remount undoes the bind). */
  bindReadOnly(source: string, target: string): Promise<void>;
  /** Detaches the mount at `target` (lazily: whoever still uses it keeps it until they let go). */
  detach(target: string): Promise<void>;
  close(): void;
}

/** mount(2) and umount2(2) numbers per architecture (asm/unistd.h). */
const SYSCALLS: Partial<Record<NodeJS.Architecture, { mount: number; umount2: number }>> = {
  x64: { mount: 165, umount2: 166 },
  arm64: { mount: 40, umount2: 39 },
};
const MS = { RDONLY: 1, NOSUID: 2, NODEV: 4, REMOUNT: 32, BIND: 4096 };
const MNT_DETACH = 2;

/** The helper: reads `m <source hex> <target hex>` or `u <target hex>`, answers `ok` or `err <errno message>`. */
function helperSource(n: { mount: number; umount2: number }): string {
  const remount = MS.REMOUNT | MS.BIND | MS.RDONLY | MS.NOSUID | MS.NODEV;
  return `
$| = 1;
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, @args) = split / /, $line;
  my @paths = map { pack('H*', $_) } @args;
  my $r;
  if ($op eq 'm' && @paths == 2) {
    $r = syscall(${n.mount}, $paths[0], $paths[1], 0, ${MS.BIND}, 0);
    if ($r == 0) {
      $r = syscall(${n.mount}, $paths[0], $paths[1], 0, ${remount}, 0);
      if ($r != 0) { my $e = "$!"; syscall(${n.umount2}, $paths[1], ${MNT_DETACH}); print "err $e\\n"; next; }
    }
  } elsif ($op eq 'u' && @paths == 1) {
    $r = syscall(${n.umount2}, $paths[0], ${MNT_DETACH});
  } else {
    print "err bad request\\n"; next;
  }
  print $r == 0 ? "ok\\n" : "err $!\\n";
}`;
}

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');
/** A child's stdio pipe is a socket (typed as a plain stream), which can be ref'd and unref'd. */
const pipe = (stream: unknown) => stream as Socket;

export function createMounter(): Mounter {
  const mount = systemBinary('mount');
  const umount = systemBinary('umount');
  const perl = systemBinary('perl');
  const numbers = SYSCALLS[process.arch];
  let helper: ChildProcess | undefined;
  let broken = !perl || !numbers;
  const pending: Array<(answer: string) => void> = [];

  function start(): ChildProcess {
    const child = spawn(perl as string, ['-e', helperSource(numbers as { mount: number; umount2: number })], { stdio: ['pipe', 'pipe', 'ignore'], env: {} });
    let buffer = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer += chunk;
      for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
        pending.shift()?.(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
      }
      if (pending.length === 0) pipe(child.stdout).unref();
    });
    // The idle helper never keeps this process alive; its output pipe does while a request waits (see ask).
    child.unref();
    pipe(child.stdin).unref();
    pipe(child.stdout).unref();
    const gone = () => {
      // Requests in flight fail; later ones spawn the commands instead.
      broken = true;
      helper = undefined;
      for (const answer of pending.splice(0)) answer('err the mount helper exited');
    };
    child.on('exit', gone);
    child.on('error', gone);
    child.stdin?.on('error', () => {});
    return child;
  }

  function ask(line: string): Promise<string> {
    helper ??= start();
    return new Promise((resolve) => {
      pending.push(resolve);
      if (helper) pipe(helper.stdout).ref();
      helper?.stdin?.write(`${line}\n`);
    });
  }

  async function viaHelper(line: string, what: string): Promise<void> {
    const answer = await ask(line);
    if (answer !== 'ok') throw new Error(`${what} failed: ${answer.replace(/^err /, '')}`);
  }

  async function viaCommand(file: string | undefined, args: string[], what: string): Promise<void> {
    if (!file) throw new Error(`${what} failed: util-linux's ${args[0] === '-l' ? 'umount' : 'mount'} is not installed`);
    const r = await runCommand(file, args);
    if (r.code !== 0) throw new Error(`${what} failed: ${r.stderr.trim().slice(0, 300)}`);
  }

  // Started now, so that the first execution does not wait for perl to start.
  if (!broken) helper = start();

  return {
    bindReadOnly(source, target) {
      const what = `mounting ${source}`;
      if (broken) return viaCommand(mount, ['--bind', '-o', 'ro,nosuid,nodev', source, target], what);
      return viaHelper(`m ${hex(source)} ${hex(target)}`, what);
    },
    detach(target) {
      const what = `unmounting ${target}`;
      if (broken) return viaCommand(umount, ['-l', target], what);
      return viaHelper(`u ${hex(target)}`, what);
    },
    close() {
      helper?.stdin?.end();
      helper = undefined;
    },
  };
}
