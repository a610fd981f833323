/**
 * Runs a host command (runsc, ip, nft, …) with an empty environment and a time limit, and collects its exit code and
 * output: the one execFile wrapper of the sandbox module. Also finds system binaries by absolute path, since a PATH
 * under npm starts with node_modules/.bin (where, for one, `nft` is Vercel's file tracer).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(file: string, args: string[], o: { timeoutMs?: number; input?: string } = {}): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { timeout: o.timeoutMs ?? 10_000, env: {}, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** The absolute path of a system binary (`/usr/sbin`, `/sbin`, `/usr/bin`, `/bin`), if installed. */
export function systemBinary(name: string): string | undefined {
  return ['/usr/sbin', '/sbin', '/usr/bin', '/bin'].map((dir) => `${dir}/${name}`).find((p) => fs.existsSync(p));
}
