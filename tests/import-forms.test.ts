/**
 * The JS tool forms issue 46 (item 5) found missed, each on a real package pinned as a devDependency and imported from
 * node_modules through the service, with discovery in the real gVisor sandbox: one tool offered by several factories
 * (@v0-sdk/ai-tools), zod 3 schemas (@openassistant/osm, @openassistant/plots), LangChain JS tools on the real
 * @langchain/core (fixture langchain-tools) and a toolkit class handing out tools from getters (@picahq/ai's Pica, fixture
 * pica-tools). A pinned package is imported from the registry at its pinned version.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const NODE_MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
/** The pinned version (node_modules) from the registry: a package folder in node_modules lacks its hoisted dependencies. */
const pinned = (name: string) => `npm:${name}@${JSON.parse(fs.readFileSync(path.join(NODE_MODULES, name, 'package.json'), 'utf8')).version}`;
const fixture = (name: string) => `path:${path.join(FIXTURES_DIR, 'packages', name)}`;
const variable = (name: string) => `\${${name}}`;

let svc: Service;
test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '20000' } });
});
test.after.always(() => svc?.close());

const admin = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });
const importWith = (source: string, extra: Record<string, unknown> = {}) =>
  svc.request('POST', '/api/admin/packages', { headers: admin(), body: { source, ...extra } });
const schemaOf = async (slug: string) => (await svc.request('GET', `/api/tools/${slug}`)).body.data.inputSchema;
const execute = (slug: string, params: unknown) => svc.request('POST', `/api/tools/execute/${slug}`, { body: { params } });

test.serial('@v0-sdk/ai-tools: each of its 34 tools imports once, though five exports offer it (was 136, createChat_2 …)', async (t) => {
  const res = await importWith(pinned('@v0-sdk/ai-tools'));
  t.is(res.status, 201, res.text);
  const names: string[] = res.body.data.tools.map((x: { name: string }) => x.name);
  t.is(names.length, 34, names.join(', '));
  t.false(
    names.some((n) => /_\d+$/.test(n)),
    `no name is a copy's: ${names.join(', ')}`,
  );
  t.true(names.includes('createChat') && names.includes('sendMessage') && names.includes('getCurrentUser'), names.join(', '));
  t.true(
    res.body.data.discovery.notes.some((n: string) => /102 tools offered again by other exports/.test(n)),
    JSON.stringify(res.body.data.discovery.notes),
  );
  const createChat = await schemaOf('@v0-sdk/ai-tools/createChat');
  t.is(createChat.properties.message.type, 'string', 'its zod 3 schema is read too');
});

test.serial('@openassistant/osm and @openassistant/plots: their zod 3 schemas are read, not dropped (all 15 tools had no parameters)', async (t) => {
  let tools = 0;
  for (const name of ['@openassistant/osm', '@openassistant/plots']) {
    const res = await importWith(pinned(name));
    t.is(res.status, 201, res.text);
    for (const tool of res.body.data.tools as { name: string; healthStatus: string }[]) {
      tools++;
      t.not(tool.healthStatus, 'BROKEN', tool.name);
      const schema = await schemaOf(`${name}/${tool.name}`);
      t.true(Object.keys(schema.properties ?? {}).length > 0, `${name}/${tool.name}: ${JSON.stringify(schema)}`);
      t.is(schema.$comment, undefined, `${name}/${tool.name}: ${schema.$comment}`);
    }
  }
  t.is(tools, 15);
  const geocoding = await schemaOf('@openassistant/osm/geocoding');
  t.is(geocoding.properties.address.type, 'string', JSON.stringify(geocoding));
  t.deepEqual(geocoding.required, ['address']);
  const bad = await execute('@openassistant/osm/geocoding', { address: 42 });
  t.is(bad.status, 400, bad.text);
  t.is(bad.body.error.code, 'VALIDATION_ERROR', 'a call is validated against the schema');
});

test.serial('LangChain JS tools on @langchain/core: tool(), a StructuredTool class and a DynamicStructuredTool import and run', async (t) => {
  const res = await importWith(fixture('langchain-tools'));
  t.is(res.status, 201, res.text);
  t.deepEqual(
    res.body.data.discovery.tools.map((x: { name: string; how: string; exportName: string }) => `${x.name}:${x.how}:${x.exportName}`).sort(),
    ['add:langchain-class:Adder', 'reverse:langchain-tool:reverse', 'shout:langchain-tool:shout'],
    'Formatter, a class that is not a tool, is left out',
  );
  for (const tool of res.body.data.tools) t.not(tool.healthStatus, 'BROKEN', tool.name);
  const shout = await schemaOf('@fixtures/langchain-tools/shout');
  t.deepEqual(shout.required, ['text']);
  t.is(shout.properties.text.description, 'the text to shout');
  t.deepEqual((await schemaOf('@fixtures/langchain-tools/add')).required, ['a', 'b']);

  const run = async (tool: string, params: unknown) => {
    const r = await execute(`@fixtures/langchain-tools/${tool}`, params);
    t.is(r.status, 200, r.text);
    t.true(r.body.success, r.text);
    return r.body.result;
  };
  t.is(await run('shout', { text: 'hello' }), 'HELLO');
  t.is(await run('add', { a: 2, b: 3 }), '5');
  t.is(await run('reverse', { text: 'abc' }), 'cba');
  const bad = await execute('@fixtures/langchain-tools/add', { a: 'two', b: 3 });
  t.is(bad.status, 400, bad.text);
  t.is(bad.body.error.code, 'VALIDATION_ERROR');
});

test.serial('@picahq/ai: the 400 says what was found; with its key as `options`, the tools Pica hands out from its getters import', async (t) => {
  // @picahq/ai requires the AI SDK without declaring it: the fixture is the package as its users install it, with `ai`.
  const bare = await importWith(fixture('pica-tools'));
  t.is(bare.status, 400, bare.text);
  t.regex(bare.body.error.message, /exports found, none a tool: Pica \(class, 2 constructor arguments\)/);
  t.regex(bare.body.error.message, /new Pica\(…\)/);
  t.regex(bare.body.error.message, /LangChain/);
  t.is(await svc.api.deps.db('packages').where({ name: '@fixtures/pica-tools' }).first(), undefined, 'nothing was recorded');

  const res = await importWith(fixture('pica-tools'), { options: [variable('PICA_SECRET_KEY')] });
  t.is(res.status, 201, res.text);
  const names = res.body.data.tools.map((x: { name: string }) => x.name).sort();
  // intelligenceTool and oneTool (in that order on the class) share two tools (same description and schema); their
  // `execute` tools differ, so oneTool's is keyed by its getter.
  t.deepEqual(names, ['execute', 'getActionKnowledge', 'getAvailableActions', 'oneTool_execute'], names.join(', '));
  for (const tool of res.body.data.tools) t.deepEqual(tool.package.env, ['PICA_SECRET_KEY']);
  const schema = await schemaOf('@fixtures/pica-tools/getAvailableActions');
  t.is(schema.properties.platform.type, 'string', JSON.stringify(schema));
});

test.serial('a discovered tool whose call answers success with a caught TypeError (`sandbox.exec is not a function`) is not imported healthy', async (t) => {
  const res = await importWith(fixture('disguised-errors'));
  t.is(res.status, 201, res.text);
  const health = Object.fromEntries(res.body.data.tools.map((x: { name: string; healthStatus: string }) => [x.name, x.healthStatus]));
  t.is(health.runCommand, 'BROKEN', JSON.stringify(health));
  t.not(health.repeat, 'BROKEN', 'a tool that works is healthy');
  t.not(health.lookup, 'BROKEN', 'a tool failing for want of its network is not judged by that');
  const tool = await svc.request('GET', '/api/tools/@fixtures/disguised-errors/runCommand');
  t.regex(tool.body.data.healthError, /error in its result: sandbox\.exec is not a function/, tool.text);
  const run = await execute('@fixtures/disguised-errors/runCommand', { command: 'ls' });
  t.is(run.body.error?.code, 'TOOL_UNAVAILABLE', 'a broken tool is not offered as working');
  t.regex(run.body.error.message, /sandbox\.exec is not a function/);
});
