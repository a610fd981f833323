/**
 * The TypeScript SDK's clients as they ship, one table row per client and protocol version (issue 44 "Tests"): the
 * 1.x client (@modelcontextprotocol/sdk) at each 2025 revision, and the 2.x client (@modelcontextprotocol/client)
 * pinned to 2026-07-28, in its `auto` negotiation (probes server/discover) and in its default (`legacy`: initialize).
 * Each row lists, calls, gets an error result, is refused a bogus cursor and an unknown tool, and reaches a private
 * collection with its owner's key. mcp.test.ts and mcp-2026.test.ts hold what is specific to one era.
 */
import test from 'ava';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const TEXT = '@toolshed-examples/text-tools';
const FIX = '@fixtures/mcp-tools';
let svc: Service;
let owner: { key: string; username: string };
let publicUrl: URL;
let privateUrl: URL;

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of [path.join(EXAMPLES_DIR, 'text-tools'), path.join(FIXTURES_DIR, 'packages', 'mcp-tools')]) {
    const res = await svc.importPackage(`path:${dir}`);
    if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
  }
  owner = await svc.createUser({ username: 'matrix_owner' });
  const pub = await svc.createCollection(owner.key, { name: 'Matrix public', isPublic: true }, [`${TEXT}::slugify`, `${FIX}::explode`]);
  const priv = await svc.createCollection(owner.key, { name: 'Matrix private', isPublic: false }, [`${TEXT}::slugify`]);
  publicUrl = new URL(`${svc.url}/api/mcp/${owner.username}/${pub.uid}/mcp`);
  privateUrl = new URL(`${svc.url}/api/mcp/${owner.username}/${priv.uid}/mcp`);
});
test.after.always(() => svc?.close());

/** What each row's test needs of a client, whichever SDK it is. */
interface Connected {
  version: string | undefined;
  listTools(params?: { cursor?: string }): Promise<{ tools: { name: string; inputSchema: unknown }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

interface Row {
  client: string;
  /** The version the row expects to be spoken. */
  version: string;
  connect(url: URL, headers?: Record<string, string>): Promise<Connected>;
}

/** The 1.x client offers its latest version in initialize; a client of an older release offers its own. */
function legacyRow(version: string): Row {
  return {
    client: '@modelcontextprotocol/sdk 1.x',
    version,
    async connect(url, headers = {}) {
      const client = new LegacyClient({ name: 'matrix-1x', version: '1.0.0' });
      const transport = new LegacyTransport(url, { requestInit: { headers } });
      const send = transport.send.bind(transport);
      transport.send = async (message, options) => {
        const m = message as { method?: string; params?: { protocolVersion?: string } };
        if (m.method === 'initialize' && m.params) m.params.protocolVersion = version;
        return send(message, options);
      };
      await client.connect(transport);
      return {
        version: transport.protocolVersion,
        listTools: (p) => client.listTools(p),
        callTool: (p) => client.callTool(p),
        close: () => client.close(),
      };
    },
  };
}

function modernRow(mode: 'legacy' | 'auto' | { pin: string }, version: string): Row {
  return {
    client: `@modelcontextprotocol/client 2.x (${typeof mode === 'string' ? mode : `pin ${mode.pin}`})`,
    version,
    async connect(url, headers = {}) {
      const client = new ModernClient({ name: 'matrix-2x', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(new ModernTransport(url, { requestInit: { headers } }));
      return {
        version: client.getNegotiatedProtocolVersion(),
        listTools: (p) => client.listTools(p),
        callTool: (p) => client.callTool(p),
        close: () => client.close(),
      };
    },
  };
}

const ROWS: Row[] = [
  legacyRow('2025-03-26'),
  legacyRow('2025-06-18'),
  legacyRow('2025-11-25'),
  modernRow({ pin: '2026-07-28' }, '2026-07-28'),
  modernRow('auto', '2026-07-28'),
  modernRow('legacy', '2025-11-25'),
];

const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

for (const row of ROWS) {
  test(`${row.client} at ${row.version}: list, call, an error result, a bogus cursor, an unknown tool, a private collection`, async (t) => {
    const client = await row.connect(publicUrl);
    try {
      t.is(client.version, row.version, 'the version spoken');

      const { tools } = await client.listTools();
      t.deepEqual(tools.map((x) => x.name).sort(), ['explode', 'slugify']);
      const detail = (await svc.request('GET', `/api/tools/${TEXT}/slugify`)).body.data;
      t.deepEqual(tools.find((x) => x.name === 'slugify')!.inputSchema, detail.inputSchema);

      const ok = (await client.callTool({ name: 'slugify', arguments: { text: `Row ${row.version}` } })) as CallToolResult;
      t.falsy(ok.isError, JSON.stringify(ok));
      t.deepEqual(JSON.parse(textOf(ok)), { slug: `row-${row.version}`, length: 14 });

      // A tool that throws is a result with isError, the tool's message in it, not a protocol error.
      const thrown = (await client.callTool({ name: 'explode', arguments: { reason: `row ${row.version}` } })) as CallToolResult;
      t.true(thrown.isError);
      t.regex(textOf(thrown), new RegExp(`exploded because row ${row.version}`));
      // Arguments that do not fit the schema: also a result with isError naming the field.
      const invalid = (await client.callTool({ name: 'slugify', arguments: { separator: '_' } })) as CallToolResult;
      t.true(invalid.isError);
      t.regex(textOf(invalid), /text/);

      // tools/list is one page: a cursor never given out is -32602 Invalid params.
      const cursor = await t.throwsAsync(client.listTools({ cursor: 'bogus' }));
      t.is((cursor as { code?: number }).code, -32602, cursor?.message);
      t.regex(cursor!.message, /cursor/);
      const unknown = await t.throwsAsync(client.callTool({ name: 'noSuchTool', arguments: {} }));
      t.regex(unknown!.message, /noSuchTool/);
    } finally {
      await client.close();
    }

    // The private collection: refused without a key, served with the owner's.
    await t.throwsAsync(row.connect(privateUrl));
    const keyed = await row.connect(privateUrl, { Authorization: `Bearer ${owner.key}` });
    try {
      t.deepEqual(
        (await keyed.listTools()).tools.map((x) => x.name),
        ['slugify'],
      );
    } finally {
      await keyed.close();
    }
  });
}
