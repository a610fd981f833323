/**
 * `npm test`: the preflight (runsc, ip, nft and Chromium, installed with apt as root on Debian), then one Postgres for
 * the whole run, the template database migrated once, ava (each test file clones the template), and the last line
 * `N passed, N failed`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runPreflight } from '../bin/preflight.js';
import { prepareTemplate, startTestServer } from './helpers/postgres.js';

async function main(): Promise<number> {
  const started = Date.now();
  if (!(await runPreflight({ purpose: 'test' })).ok) {
    console.log('0 passed, 1 failed');
    return 1;
  }
  const pg = await startTestServer();
  const cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-pkgcache-'));
  await fs.chmod(cacheDir, 0o755);
  // The gVisor rootfs and its startup snapshot (~6 s of a blocked worker start each) are built once for the run.
  const rootfsDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-rootfs-'));
  await fs.chmod(rootfsDir, 0o755);
  try {
    await prepareTemplate(pg.serverUrl);
    // LOG_FORMAT=json: a process a test starts logs JSON lines even if it ever gets a terminal.
    const env = {
      ...process.env,
      LOG_FORMAT: 'json',
      TOOLSHED_TEST_SERVER_URL: pg.serverUrl,
      TOOLSHED_TEST_CACHE_DIR: cacheDir,
      TOOLSHED_TEST_ROOTFS_DIR: rootfsDir,
    };
    const child = spawn('npx', ['ava', ...process.argv.slice(2)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.stderr.on('data', (d) => {
      out += d;
      process.stderr.write(d);
    });
    const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
    const count = (re: RegExp) => [...out.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
    // ava prints one ✔ line per passed test and one ✘ line per failed one (it omits the passed total on failure).
    const passed = (out.match(/^\s*✔/gm) ?? []).length;
    let failed = (out.match(/^\s*✘/gm) ?? []).length + count(/^\s*(\d+) uncaught exceptions?/gm) + count(/^\s*(\d+) unhandled rejections?/gm);
    if (code !== 0 && failed === 0) failed = 1; // ava failed before counting (e.g. a file that did not load)
    console.log(`\ntest run took ${Math.round((Date.now() - started) / 1000)} s`);
    const skipped = (out.match(/^\s*- \[skip\]/gm) ?? []).length;
    console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
    return code;
  } finally {
    await pg.server?.stop();
    if (pg.dir) await fs.rm(pg.dir, { recursive: true, force: true });
    await fs.rm(cacheDir, { recursive: true, force: true });
    await fs.rm(rootfsDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    console.log('0 passed, 1 failed');
    process.exit(1);
  },
);
