/** Package sources: `npm:<name>@<range>` (or `npm:<name>` for latest) and `path:<absolute dir>`. */
import path from 'node:path';
import { z } from 'zod';
import { npmNameProblems } from './npm-rules.js';

export type PackageSource = { kind: 'npm'; name: string; range: string } | { kind: 'path'; dir: string };

export function parseSource(source: string): PackageSource | { error: string } {
  if (source.startsWith('path:')) {
    const dir = source.slice(5);
    if (!path.isAbsolute(dir)) return { error: 'path: sources need an absolute directory' };
    return { kind: 'path', dir: path.normalize(dir) };
  }
  if (source.startsWith('npm:')) {
    const spec = source.slice(4);
    const at = spec.lastIndexOf('@');
    const [name, range] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, 'latest'];
    const problems = npmNameProblems(name);
    if (problems.length > 0) return { error: `'${name}' is not a valid npm package name: ${problems.join('; ')}` };
    if (!/^[\w.*^~<>=| -]+$/.test(range)) return { error: `'${range}' is not a valid version range` };
    return { kind: 'npm', name, range };
  }
  return { error: 'source must start with "npm:" or "path:"' };
}

export const sourceSchema = z.string().superRefine((s, ctx) => {
  const parsed = parseSource(s);
  if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
});
