/**
 * A Python venv with given requirements for a test, made once per machine and reused by later runs while the wheels
 * it was made from are unchanged. pip installs into it from outside (`pip --python`, one resolve for every
 * requirement, no byte-compiling of what no test imports: 62 → 20 s and 13.4 → 5.3 CPU-s for mcp + fastmcp at
 * load 12–15, 2026-12-02), into a folder of its own that is renamed into place, so two runs side by side never share
 * a half-made venv. Its marker lists each wheel installed with its sha256 (pip's `--report`); a wheel file that is
 * gone or changed makes the venv again. A clean machine has no venv: it is made then.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** pip without a reachable index fails fast (no retries) and uses what the machine's pip configuration offers. */
const PIP_ENV = { ...process.env, PIP_RETRIES: '0', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' };

export interface PythonVenv {
  python: string;
  /** What could not be installed (optional requirements), for the test to log and allow for. */
  notes: string[];
}

interface Marker {
  notes: string[];
  /** Each installed distribution's archive: a local file's path (checked at reuse) or a URL, and its sha256. */
  wheels: { url: string; sha256: string }[];
}

const readMarker = (file: string): Promise<Marker | undefined> =>
  fs
    .readFile(file, 'utf8')
    .then((t) => JSON.parse(t))
    .catch(() => undefined);

const sha256Of = async (file: string) =>
  crypto
    .createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');

/** Whether every local wheel the venv was made from is still there with the same content. */
async function wheelsUnchanged(marker: Marker): Promise<boolean> {
  for (const w of marker.wheels) {
    if (!w.url.startsWith('file:')) continue;
    const now = await sha256Of(fileURLToPath(w.url)).catch(() => undefined);
    if (now !== w.sha256) return false;
  }
  return true;
}

function wheelsOf(report: { install?: { download_info?: { url?: string; archive_info?: { hashes?: { sha256?: string } } } }[] }): Marker['wheels'] {
  return (report.install ?? []).flatMap((i) => {
    const url = i.download_info?.url;
    const sha256 = i.download_info?.archive_info?.hashes?.sha256;
    return url && sha256 ? [{ url, sha256 }] : [];
  });
}

/** One pip install into `dir`'s venv; its report's wheels, or the reason it failed (pip's last line). */
async function pipInstall(dir: string, requirements: string[]): Promise<Marker['wheels'] | { failed: string }> {
  const report = path.join(dir, '.toolshed-report.json');
  const args = ['-m', 'pip', '--python', path.join(dir, 'bin', 'python'), 'install', '--quiet', '--no-compile', '--report', report, ...requirements];
  try {
    await run('python3', args, { timeout: 170_000, env: PIP_ENV });
    return wheelsOf(JSON.parse(await fs.readFile(report, 'utf8')));
  } catch (e) {
    return {
      failed:
        String((e as { stderr?: string }).stderr ?? e)
          .trim()
          .split('\n')
          .at(-1) ?? '',
    };
  }
}

/**
 * The venv for `required` (and `optional`, where this machine's pip can install it), named by its requirements
 * under the temp dir; or why there is none (no python3 with venv, a pip older than `--python`, or `required` not
 * installable from what this machine has).
 */
export async function pythonVenv(required: string[], optional: string[] = []): Promise<PythonVenv | { skip: string }> {
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify([required, optional]))
    .digest('hex')
    .slice(0, 12);
  const venv = path.join(os.tmpdir(), `toolshed-tests-python-${key}`);
  const python = path.join(venv, 'bin', 'python');
  const markerFile = path.join(venv, '.toolshed-ready.json');
  const marker = await readMarker(markerFile);
  if (marker && (await wheelsUnchanged(marker))) return { python, notes: marker.notes };

  const dir = `${venv}.tmp-${process.pid}`;
  await fs.rm(dir, { recursive: true, force: true });
  try {
    await run('python3', ['-m', 'venv', '--without-pip', dir], { timeout: 60_000 });
  } catch (e) {
    return { skip: `no python3 with venv here (${(e as Error).message.split('\n')[0]})` };
  }
  try {
    const notes: string[] = [];
    let wheels = await pipInstall(dir, [...required, ...optional]);
    if ('failed' in wheels && optional.length) {
      wheels = await pipInstall(dir, required);
      notes.push(`${optional.join(', ')} could not be installed here: only ${required.join(', ')} is tried`);
    }
    if ('failed' in wheels) {
      await fs.rm(dir, { recursive: true, force: true });
      return { skip: `pip could not install ${required.join(', ')} from what this machine has (${wheels.failed})` };
    }
    await fs.writeFile(path.join(dir, '.toolshed-ready.json'), JSON.stringify({ notes, wheels } satisfies Marker));
    // Into place. A venv another run placed meanwhile is used and ours dropped; a stale one (no marker, or changed
    // wheels) is replaced. A venv runs from wherever it lies (bin/python finds its packages beside itself), so if the
    // place cannot be taken, ours serves from where it was made.
    const placedMeanwhile = await readMarker(markerFile);
    if (placedMeanwhile && (await wheelsUnchanged(placedMeanwhile))) {
      await fs.rm(dir, { recursive: true, force: true });
      return { python, notes: placedMeanwhile.notes };
    }
    await fs.rm(venv, { recursive: true, force: true });
    const placed = await fs.rename(dir, venv).then(
      () => true,
      () => false,
    );
    return { python: placed ? python : path.join(dir, 'bin', 'python'), notes };
  } catch (e) {
    await fs.rm(dir, { recursive: true, force: true });
    throw e;
  }
}
