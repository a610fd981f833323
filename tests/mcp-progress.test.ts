/**
 * Issue 44 item 4: an imported MCP server's `notifications/progress` reach the MCP client that sent a progressToken
 * with its tools/call, on the call's SSE response, in both protocol eras; a client that sent none gets a plain JSON
 * answer, and a JavaScript tool (no progress) answers as before. The real server-everything (a devDependency) and its
 * trigger-long-running-operation tool, run in gVisor; the real SDK clients (1.x and 2.x) through the service.
 */
import test from 'ava';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const TEXT = '@toolshed-examples/text-tools';
const LONG = 'trigger-long-running-operation';
let svc: Service;
let url: string;

test.before(async () => {
  svc = await startService();
  for (const source of [`path:${path.join(MODULES, EVERYTHING)}`, `path:${path.join(EXAMPLES_DIR, 'text-tools')}`]) {
    const imported = await svc.importPackage(source);
    if (imported.status !== 201) throw new Error(imported.text);
  }
  const user = await svc.createUser();
  const c = await svc.createCollection(user.key, { name: 'Progress', isPublic: true }, [`${EVERYTHING}::${LONG}`, `${TEXT}::slugify`]);
  url = `${svc.url}/api/mcp/${user.username}/${c.uid}/mcp`;
});
test.after.always(() => svc?.close());

const ARGS = { duration: 2, steps: 4 };

test("the server's progress reaches a 2025-11-25 client that asked for it, in order, before the result", async (t) => {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const seen: Progress[] = [];
  const r = (await client.callTool({ name: LONG, arguments: ARGS }, undefined, { onprogress: (p) => seen.push(p), timeout: 60_000 })) as CallToolResult;
  t.falsy(r.isError, JSON.stringify(r).slice(0, 300));
  t.regex((r.content[0] as { text: string }).text, /Long running operation completed/);
  t.true(seen.length >= 2, `progress seen: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) t.true(seen[i].progress > seen[i - 1].progress, JSON.stringify(seen));
  t.true(
    seen.every((p) => p.total === 4),
    JSON.stringify(seen),
  );
  // The last step may come in the same chunk as the result, which the SDK client handles first (it runs notification
  // handlers a microtask later) and then drops the progress: the wire order is the next test's.
  await client.close();
});

test('the answer is an SSE stream only when the call asks for progress', async (t) => {
  const call = (meta?: object) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: LONG, arguments: { duration: 1, steps: 2 }, ...(meta ? { _meta: meta } : {}) },
      }),
    });
  const plain = await call();
  t.regex(plain.headers.get('content-type') ?? '', /application\/json/);
  const body = await plain.json();
  t.regex(body.result.content[0].text, /completed/);
  const streamed = await call({ progressToken: 'tok-1' });
  t.regex(streamed.headers.get('content-type') ?? '', /text\/event-stream/);
  const text = await streamed.text();
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
  const progress = events.filter((e) => e.method === 'notifications/progress');
  t.true(progress.length >= 1, text.slice(0, 500));
  t.is(progress[0].params.progressToken, 'tok-1');
  t.like(progress.at(-1).params, { progress: 2, total: 2 }, 'the last step is there');
  t.is(events.at(-1).id, 7, 'the result comes last, after every progress');
});

test('a JavaScript tool called with a progress token answers as before, with no progress', async (t) => {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const seen: Progress[] = [];
  const r = (await client.callTool({ name: 'slugify', arguments: { text: 'Hello World' } }, undefined, { onprogress: (p) => seen.push(p) })) as CallToolResult;
  t.falsy(r.isError, JSON.stringify(r).slice(0, 300));
  t.regex(JSON.stringify(r.content), /hello-world/);
  t.deepEqual(seen, []);
  await client.close();
});

test("a 2026-07-28 client that asks for progress gets the server's too, the last before the result", async (t) => {
  const client = new ModernClient({ name: 'toolshed-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  // What the service wrote, as the client read it.
  const wire: Promise<string>[] = [];
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    wire.push(res.clone().text());
    return res;
  };
  await client.connect(new ModernTransport(new URL(url), { fetch: recording }));
  const seen: { progress: number; total?: number }[] = [];
  const r = await client.callTool({ name: LONG, arguments: ARGS }, { onprogress: (p: { progress: number; total?: number }) => seen.push(p), timeout: 60_000 });
  t.falsy(r.isError, JSON.stringify(r).slice(0, 300));
  t.true(seen.length >= 2, `progress seen: ${JSON.stringify(seen)}`);
  for (let i = 1; i < seen.length; i++) t.true(seen[i].progress > seen[i - 1].progress, JSON.stringify(seen));
  const events = (await Promise.all(wire))
    .flatMap((text) => text.split('\n'))
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
  const progress = events.filter((e) => e.method === 'notifications/progress').map((e) => e.params.progress);
  t.deepEqual(progress, [1, 2, 3, 4], 'every step, in order');
  t.truthy(events.at(-1).result, 'then the result');
  await client.close();
});
