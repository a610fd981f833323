/**
 * Builds the web app: esbuild bundles web/src/main.tsx (Preact) into content-hashed files under <out>/assets, with
 * .br and .gz siblings, and writes <out>/index.html pointing at them (no inline script or style: the CSP forbids
 * both). `ensureWebBuild()` rebuilds only when the output is missing or older than the sources (a hash of web/src and
 * this file, kept in build-info.json). Run directly: `tsx web/build.ts [outDir]`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const WEB_ROOT = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.join(WEB_ROOT, 'src');
export const DEFAULT_OUT_DIR = path.resolve(WEB_ROOT, '..', 'dist', 'web');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : Promise.resolve([path.join(dir, e.name)]))));
  return nested.flat().sort();
}

/** A hash of everything the build reads: the sources and this script. */
export async function sourceHash(): Promise<string> {
  const h = crypto.createHash('sha256');
  for (const file of [...(await listFiles(SRC)), fileURLToPath(import.meta.url)]) {
    h.update(path.relative(WEB_ROOT, file))
      .update('\0')
      .update(await fs.readFile(file))
      .update('\0');
  }
  return h.digest('hex');
}

function indexHtml(js: string, css: string, icon: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Toolshed</title>
<meta name="description" content="A registry of executable tools for AI agents">
<link rel="icon" href="/${icon}" type="image/svg+xml">
<link rel="stylesheet" href="/${css}">
<script type="module" src="/${js}"></script>
</head>
<body>
<div id="app"><noscript><p>Toolshed's web app needs JavaScript. The JSON API is at <a href="/docs">/docs</a>.</p></noscript></div>
</body>
</html>
`;
}

export async function buildWeb(outDir = DEFAULT_OUT_DIR): Promise<{ outDir: string; files: Record<string, number> }> {
  const tmp = `${outDir}.tmp-${process.pid}`;
  await fs.rm(tmp, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { app: path.join(SRC, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.svg': 'file' },
    outdir: path.join(tmp, 'assets'),
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.relative(tmp, path.resolve(f)));
  const js = outputs.find((f) => f.endsWith('.js'))!;
  const css = outputs.find((f) => f.endsWith('.css'))!;
  const iconSrc = await fs.readFile(path.join(SRC, 'favicon.svg'));
  const icon = `assets/favicon-${crypto.createHash('sha256').update(iconSrc).digest('hex').slice(0, 8)}.svg`;
  await fs.writeFile(path.join(tmp, icon), iconSrc);
  await fs.writeFile(path.join(tmp, 'index.html'), indexHtml(js, css, icon));
  const files: Record<string, number> = {};
  for (const f of [js, css, icon]) {
    const body = await fs.readFile(path.join(tmp, f));
    const gz = zlib.gzipSync(body, { level: 9 });
    await fs.writeFile(path.join(tmp, `${f}.gz`), gz);
    await fs.writeFile(path.join(tmp, `${f}.br`), zlib.brotliCompressSync(body));
    files[f] = gz.length;
  }
  await fs.writeFile(path.join(tmp, 'build-info.json'), JSON.stringify({ sourceHash: await sourceHash(), files }, null, 2));
  await fs.rm(outDir, { recursive: true, force: true });
  await fs.mkdir(path.dirname(outDir), { recursive: true });
  await fs.rename(tmp, outDir);
  return { outDir, files };
}

/** Builds when the output is missing or stale; true when it built. For `npm start`. */
export async function ensureWebBuild(outDir = DEFAULT_OUT_DIR): Promise<boolean> {
  try {
    const info = JSON.parse(await fs.readFile(path.join(outDir, 'build-info.json'), 'utf8'));
    await fs.access(path.join(outDir, 'index.html'));
    if (info.sourceHash === (await sourceHash())) return false;
  } catch {
    // missing or unreadable: build
  }
  await buildWeb(outDir);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : DEFAULT_OUT_DIR;
  buildWeb(out).then(
    ({ files }) => {
      for (const [f, gz] of Object.entries(files)) console.log(`${f}  ${(gz / 1024).toFixed(1)} KiB gzip`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
