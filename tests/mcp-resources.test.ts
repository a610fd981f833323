/**
 * Issue 44 items 4 and 5: an imported MCP server's resources, resource templates and prompts are served by the
 * collection that holds its tools (listed from what was recorded at import, read and got in the sandbox through the
 * job path), names of two servers never collide, and icons (MCP 2025-11-25) are served where a server has them, only
 * of the kinds that are safe to show. The real server-everything (a devDependency) and a hand-written fixture server
 * (tests/fixtures/mcp-servers/offer-server.cjs), run in gVisor; the real SDK clients (1.x and 2.x) through the service.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const FIXTURE = '@fixtures/offer-server';
const TEXT = '@toolshed-examples/text-tools';
let svc: Service;
let url: string;
let jsOnlyUrl: string;
let root: string;

test.before(async () => {
  svc = await startService();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-offer-'));
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'offer-server.cjs'), path.join(root, 'server.cjs'));
  await fs.writeFile(path.join(root, 'package.json'), JSON.stringify({ name: FIXTURE, version: '1.0.0', bin: { 'offer-server': 'server.cjs' } }));
  for (const source of [`path:${path.join(MODULES, EVERYTHING)}`, `path:${root}`, `path:${path.join(EXAMPLES_DIR, 'text-tools')}`]) {
    const imported = await svc.importPackage(source);
    if (imported.status !== 201) throw new Error(imported.text);
  }
  const user = await svc.createUser();
  const tools = [`${EVERYTHING}::echo`, `${FIXTURE}::shout`, `${FIXTURE}::whisper`, `${TEXT}::slugify`];
  const c = await svc.createCollection(user.key, { name: 'Offers', isPublic: true }, tools);
  url = `${svc.url}/api/mcp/${user.username}/${c.uid}/mcp`;
  const js = await svc.createCollection(user.key, { name: 'Only JavaScript', isPublic: true }, [`${TEXT}::slugify`]);
  jsOnlyUrl = `${svc.url}/api/mcp/${user.username}/${js.uid}/mcp`;
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

async function connect(at = url): Promise<Client> {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(at)));
  return client;
}

test('resources and prompts are advertised only by a collection that has some', async (t) => {
  const client = await connect();
  const caps = client.getServerCapabilities();
  t.truthy(caps?.resources, JSON.stringify(caps));
  t.truthy(caps?.prompts, JSON.stringify(caps));
  await client.close();
  const js = await connect(jsOnlyUrl);
  t.falsy(js.getServerCapabilities()?.resources);
  t.falsy(js.getServerCapabilities()?.prompts);
  await t.throwsAsync(js.listResources(), { message: /Method not found/i });
  await js.close();
});

test("resources/list and templates hold both servers' resources; a read runs on the server that has the URI", async (t) => {
  const client = await connect();
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  t.true(uris.includes('fixture://notes/readme'), JSON.stringify(uris));
  t.true(
    uris.some((u) => u.startsWith('demo://resource/static/')),
    JSON.stringify(uris),
  );
  const { resourceTemplates } = await client.listResourceTemplates();
  t.true(resourceTemplates.some((r) => r.uriTemplate === 'fixture://echo/{word}'));
  t.true(resourceTemplates.some((r) => r.uriTemplate.startsWith('demo://resource/dynamic/text/')));

  const note = await client.readResource({ uri: 'fixture://notes/readme' });
  t.deepEqual(note.contents, [{ uri: 'fixture://notes/readme', mimeType: 'text/plain', text: 'The fixture readme, read in the sandbox' }]);
  // A templated URI goes to the server whose template it fits.
  const echoed = await client.readResource({ uri: 'fixture://echo/hello' });
  t.is((echoed.contents[0] as { text: string }).text, 'echo: hello');
  const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/1' });
  t.is(dynamic.contents[0].uri, 'demo://resource/dynamic/text/1');
  t.regex((dynamic.contents[0] as { text: string }).text, /1/);
  await client.close();
});

test('a read of a URI no server has is the resource-not-found error', async (t) => {
  const client = await connect();
  const err = await t.throwsAsync(client.readResource({ uri: 'nowhere://x' }));
  t.regex(err.message, /Resource not found: nowhere:\/\/x/);
  t.is((err as unknown as { code: number }).code, -32002);
  // One the server itself refuses (a templated scheme it lists, a URI it does not have): its own error.
  const refused = await t.throwsAsync(client.readResource({ uri: 'fixture://notes/missing' }));
  t.regex(refused.message, /Resource not found|fixture:\/\/notes\/missing/);
  await client.close();
});

test('prompts of two servers with the same name are told apart by package, and prompts/get runs on the right one', async (t) => {
  const client = await connect();
  const { prompts } = await client.listPrompts();
  const names = prompts.map((p) => p.name).sort();
  t.true(names.includes('offer-server__simple-prompt'), JSON.stringify(names));
  t.true(names.includes('server-everything__simple-prompt'), JSON.stringify(names));
  t.false(names.includes('simple-prompt'), 'the clashing name is served by neither');
  t.true(names.includes('args-prompt'), 'a name only one server has is kept');
  const mine = await client.getPrompt({ name: 'offer-server__simple-prompt', arguments: { topic: 'sandboxes' } });
  t.deepEqual(mine.messages, [{ role: 'user', content: { type: 'text', text: 'Tell me about sandboxes' } }]);
  const theirs = await client.getPrompt({ name: 'server-everything__simple-prompt' });
  t.is((theirs.messages[0].content as { text: string }).text, 'This is a simple prompt without arguments.');
  // A required argument left out is refused before anything runs; an unknown prompt likewise.
  await t.throwsAsync(client.getPrompt({ name: 'offer-server__simple-prompt' }), { message: /missing topic/ });
  await t.throwsAsync(client.getPrompt({ name: 'simple-prompt' }), { message: /Unknown prompt 'simple-prompt'/ });
  await client.close();
});

test('a 2026-07-28 client lists and reads the same resources and prompts', async (t) => {
  const client = new ModernClient({ name: 'toolshed-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(url)));
  const { resources } = await client.listResources();
  t.true(resources.some((r) => r.uri === 'fixture://notes/readme'));
  const note = await client.readResource({ uri: 'fixture://notes/readme' });
  t.is((note.contents[0] as { text: string }).text, 'The fixture readme, read in the sandbox');
  const { prompts } = await client.listPrompts();
  t.true(prompts.some((p) => p.name === 'offer-server__simple-prompt'));
  const { tools } = await client.listTools();
  t.deepEqual(
    tools.find((x) => x.name === 'shout')?.icons?.map((i) => (i.src.startsWith('data:') ? i.src.slice(0, 22) : i.src)),
    ['https://icons.example/shout.svg', 'data:image/png;base64,'],
  );
  await client.close();
});

test('icons: a tool keeps only https and bounded data: images, a tool without its own gets its server’s, a JavaScript tool none', async (t) => {
  const client = await connect();
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((x) => [x.name, x as { icons?: { src: string; mimeType?: string; sizes?: string[] }[] }]));
  const shout = byName.get('shout')!.icons!;
  t.deepEqual(
    shout.map((i) => (i.src.startsWith('data:') ? i.src.slice(0, 22) : i.src)),
    ['https://icons.example/shout.svg', 'data:image/png;base64,'],
    'http:, javascript:, data:text/html and an oversized data: icon are dropped',
  );
  t.deepEqual(shout[0], { src: 'https://icons.example/shout.svg', mimeType: 'image/svg+xml', sizes: ['any'] });
  t.deepEqual(byName.get('whisper')!.icons, [{ src: 'https://icons.example/server.png', mimeType: 'image/png' }]);
  t.is(byName.get('slugify')!.icons, undefined);
  t.is(byName.get('echo')!.icons, undefined, 'server-everything has no icons');
  await client.close();
  // The REST detail has them too (beyond the contract: docs/mcp.md).
  const detail = await svc.request('GET', `/api/tools/${FIXTURE}/shout`);
  t.is(detail.status, 200, detail.text);
  t.is(detail.body.data.icons.length, 2);
  t.is(detail.body.data.icons[0].src, 'https://icons.example/shout.svg');
  const js = await svc.request('GET', `/api/tools/${TEXT}/slugify`);
  t.is(js.body.data.icons, undefined);
});
