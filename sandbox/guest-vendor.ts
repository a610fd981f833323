/**
 * Libraries the guest uses that are not our product, built into one CommonJS file each beside the guest's own files
 * in the rootfs (the startup snapshot bundles every `.cjs` there, and the sandbox has no node_modules of ours).
 * - `zod-to-json-schema.cjs`: zod-to-json-schema (the converter the AI SDK itself used for zod 3), for a package whose
 *   tools carry zod 3 schemas and that installs neither zod-to-json-schema nor the AI SDK (@openassistant/osm): it
 *   reads a schema's `_def` only, so it converts the package's own zod 3 instances. Its one runtime import from zod,
 *   the `ZodFirstPartyTypeKind` names, is given from our zod's `zod/v3` so that zod itself is not bundled.
 * Run directly from sandbox/guest (the process runner), the guest requires the installed package instead.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';

const require = createRequire(import.meta.url);

/** The package.json of an installed package (zod-to-json-schema's "exports" does not export it). */
function manifestOf(name: string): string {
  for (let dir = path.dirname(require.resolve(name)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file) && (JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === name) return file;
  }
  throw new Error(`cannot find the package.json of ${name}`);
}

/** What the vendored files are built from (a part of the rootfs's hash). */
export function guestVendorStamp(): string {
  const version = (name: string) => (JSON.parse(fs.readFileSync(manifestOf(name), 'utf8')) as { version: string }).version;
  return `vendor:zod-to-json-schema@${version('zod-to-json-schema')}:zod@${version('zod')}\n`;
}

/** Writes the vendored files into `guestDir` (the rootfs's /guest being built). */
export function writeGuestVendor(guestDir: string): void {
  const kinds = Object.keys((require('zod/v3') as { ZodFirstPartyTypeKind: Record<string, string> }).ZodFirstPartyTypeKind);
  const shim = path.join(guestDir, '.zod-v3-kinds.cjs');
  fs.writeFileSync(shim, `exports.ZodFirstPartyTypeKind = ${JSON.stringify(Object.fromEntries(kinds.map((k) => [k, k])))};\n`);
  try {
    buildSync({
      entryPoints: [require.resolve('zod-to-json-schema')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      alias: { 'zod/v3': shim },
      legalComments: 'inline',
      outfile: path.join(guestDir, 'zod-to-json-schema.cjs'),
      logLevel: 'silent',
    });
  } finally {
    fs.rmSync(shim, { force: true });
  }
  fs.chmodSync(path.join(guestDir, 'zod-to-json-schema.cjs'), 0o644);
}
