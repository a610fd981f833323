/** The hand-written stdio MCP server of tests/fixtures/mcp-servers (one mode per misbehaviour) as a package of its own. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { FIXTURES_DIR } from './service.js';

/**
 * A package `@fixtures/mcp-<mode>` under `root` holding the fixture server as its bin; imported with `args: [mode]`,
 * or, `bare`, without arguments (its mode is then in package.json's `fixtureMode`). `binless`: no bin, the server as
 * `main`, depending on the MCP SDK (as @niledatabase/nile-mcp-server), started without arguments too.
 */
export async function mcpFixturePackage(root: string, mode: string, opts: { bare?: boolean; binless?: boolean; launched?: boolean } = {}): Promise<string> {
  const dir = path.join(root, mode);
  await fs.mkdir(dir, { recursive: true });
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  // `launched`: the bin only starts a program the package ships, as a server written in Go does (@digitalocean/mcp);
  // nothing in the bin's text says MCP, its keywords do.
  if (opts.launched) {
    await fs.writeFile(
      path.join(dir, 'launch.cjs'),
      "const { spawn } = require('node:child_process');\n" +
        "const child = spawn(process.execPath, [require('node:path').join(__dirname, 'server.cjs')], { stdio: 'inherit' });\n" +
        "child.on('exit', (code) => process.exit(code ?? 1));\n",
    );
  }
  const bin = opts.launched ? 'launch.cjs' : 'server.cjs';
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: `@fixtures/mcp-${mode}`,
      version: '1.0.0',
      description: `fixture server: ${mode}`,
      ...(opts.launched ? { keywords: ['mcp', 'fixture'] } : {}),
      ...(opts.binless ? { main: 'server.cjs', dependencies: { '@modelcontextprotocol/sdk': '1.32.2' } } : { bin: { [`mcp-${mode}`]: bin } }),
      ...(opts.bare || opts.binless || opts.launched ? { fixtureMode: mode } : {}),
    }),
  );
  return dir;
}
