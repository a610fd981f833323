/**
 * SANDBOX_NETWORK=egress on real runsc, nftables and network namespaces. There is no internet here, so the test
 * builds a small one: a network namespace behind a veth of the host that holds a public address (11.22.33.44, with a
 * TCP greeter and a UDP echo) and a private one (172.30.77.2, a DNS server answering every A query with the public
 * address, the same greeter, and a UDP echo on another port). The host routes 11.22.33.44 to it, as a default route
 * would route any public address. A sandbox must reach the public address, by address and by name (the resolver is
 * the one exception to the private ranges, on port 53 only), and nothing else: not the host, not its loopback, not
 * link-local, not the private address behind the same veth. Without egress, it sees no interface but loopback.
 * Egress is only for a tool that declares `network` (ExecuteRequest.network): any other tool run by the same egress-mode
 * runner gets a sandbox without network, and the warm pool holds only those.
 */
import test from 'ava';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { systemBinary } from '../sandbox/command.js';
import { namesOf, removeRules } from '../sandbox/egress.js';
import { createGvisorRunner, type GvisorRunner } from '../sandbox/gvisor-runner.js';
import type { ExecuteOutcome } from '../sandbox/types.js';
import { makeFixtureCache, makeStateDir } from './fixtures/sandbox/make-cache.js';
import { settle } from './helpers/wait.js';

const SUBNET = '10.214.0.0/24';
const PUBLIC = '11.22.33.44';
const PRIVATE = '172.30.77.2';
const INET_NS = `tsinet-${process.pid}`;
const INET_LINK = `tsi${process.pid % 100_000}`;

const INTERNET = `
const dgram = require('node:dgram');
const net = require('node:net');
net.createServer((c) => c.end('hello from the internet')).listen(8080, '0.0.0.0');
// UDP answers come from the address asked (a socket on 0.0.0.0 would answer from the primary one).
for (const address of ['${PUBLIC}', '${PRIVATE}']) {
  const echo = dgram.createSocket('udp4');
  echo.on('message', (m, r) => echo.send('echo ' + m, r.port, r.address));
  echo.bind(5300, address);
}
// DNS: every A query is answered with ${PUBLIC}; other types get an empty answer.
const dns = dgram.createSocket('udp4');
dns.on('message', (m, r) => {
  let i = 12;
  while (m[i] !== 0) i += m[i] + 1;
  const qtype = m.readUInt16BE(i + 1);
  const header = Buffer.from([m[0], m[1], 0x81, 0x80, 0, 1, 0, qtype === 1 ? 1 : 0, 0, 0, 0, 0]);
  const answer = qtype === 1 ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ${PUBLIC.split('.').join(', ')}]) : Buffer.alloc(0);
  dns.send(Buffer.concat([header, m.subarray(12, i + 5), answer]), r.port, r.address);
});
dns.bind(53, '${PRIVATE}', () => console.log('ready'));
`;

const IP = systemBinary('ip');
const NFT = systemBinary('nft');
const ip = (...args: string[]) => execFileSync(IP as string, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const NS_PREFIX = namesOf(SUBNET).ns;
const ourNamespaces = () => (fs.existsSync('/run/netns') ? fs.readdirSync('/run/netns').filter((n) => n.startsWith(NS_PREFIX)) : []);

const cache = makeFixtureCache();
const stateDirs: string[] = [];
let internet: ChildProcess | undefined;
let egress: GvisorRunner;
let offline: GvisorRunner;
let namespacesBefore: string[] = [];

test.before(async () => {
  if (!IP || !NFT) throw new Error('the egress test needs ip and nft (apt-get install -y iproute2 nftables; .ci/run installs them) and root');
  namespacesBefore = ourNamespaces();
  ip('netns', 'add', INET_NS);
  ip('link', 'add', INET_LINK, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', INET_NS);
  ip('addr', 'add', '172.30.77.1/30', 'dev', INET_LINK);
  ip('link', 'set', INET_LINK, 'up');
  for (const cmd of [
    ['addr', 'add', `${PRIVATE}/30`, 'dev', 'eth0'],
    ['addr', 'add', `${PUBLIC}/32`, 'dev', 'eth0'],
    ['link', 'set', 'eth0', 'up'],
    ['link', 'set', 'lo', 'up'],
    ['route', 'add', 'default', 'via', '172.30.77.1'],
  ]) {
    ip('-n', INET_NS, ...cmd);
  }
  ip('route', 'add', `${PUBLIC}/32`, 'via', PRIVATE, 'dev', INET_LINK);
  // Our own test server, started on the host inside the fake internet's namespace (no tool code runs outside runsc).
  internet = spawn(IP as string, ['netns', 'exec', INET_NS, process.execPath, '-e', INTERNET], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    internet?.stdout?.once('data', () => resolve());
    internet?.once('exit', (code) => reject(new Error(`fake internet exited (${code})`)));
  });

  const make = (network: 'none' | 'egress', poolSize: number) => {
    const stateDir = makeStateDir();
    stateDirs.push(stateDir);
    return createGvisorRunner({ poolSize, network, packageCacheDir: cache.dir, stateDir, egress: { subnet: SUBNET, dns: [PRIVATE] } });
  };
  egress = make('egress', 2);
  offline = make('none', 0);
});

test.after.always(async () => {
  await Promise.all([egress?.close(), offline?.close()]);
  internet?.kill();
  for (const args of [
    ['link', 'del', INET_LINK],
    ['netns', 'del', INET_NS],
  ]) {
    try {
      ip(...args);
    } catch {
      // already gone
    }
  }
  removeRules(SUBNET);
  cache.remove();
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const run = (runner: GvisorRunner, exportName: string, params: Record<string, unknown> = {}, network = true) =>
  runner.execute({ pkg: cache.pkg('hostile'), exportName, params, env: {}, timeoutMs: 20_000, network });
const text = (r: ExecuteOutcome) => JSON.stringify(r);

test.serial('a sandbox has an IPv4 interface of its own on the egress subnet, and no IPv6 but loopback', async (t) => {
  const r = await run(egress, 'interfaces');
  if (r.kind !== 'ok') return t.fail(text(r));
  const ifaces = r.output as Record<string, string[]>;
  t.deepEqual(Object.keys(ifaces).sort(), ['eth0', 'lo']);
  t.is(ifaces.eth0.length, 1);
  t.regex(ifaces.eth0[0], /^10\.214\.0\.\d+\/30$/);
  t.deepEqual(ifaces.lo.sort(), ['127.0.0.1/8', '::1/128']);
});

test.serial('a sandbox reaches a public address, by address and by name through the configured resolver', async (t) => {
  t.like(await run(egress, 'connect', { host: PUBLIC, port: 8080 }), { kind: 'ok', output: { connected: true, data: 'hello from the internet' } });
  t.like(await run(egress, 'udpAsk', { host: PUBLIC, port: 5300, text: 'ping' }), { kind: 'ok', output: { answer: 'echo ping' } });
  t.like(await run(egress, 'lookup', { name: 'tools.example.com' }), { kind: 'ok', output: { addresses: [PUBLIC] } });
  t.like(await run(egress, 'connect', { host: 'tools.example.com', port: 8080 }), { kind: 'ok', output: { connected: true } });
});

test.serial('private addresses are refused at once, even behind the route that leads to the public one', async (t) => {
  // Refused, not dropped: a dropped SYN ends in the tool's own 3 s 'connect timed out', a reject in ECONNREFUSED.
  // (The wall-clock of the whole run is not asserted: it includes a sandbox start, which a loaded CI machine slows.)
  const r = await run(egress, 'connect', { host: PRIVATE, port: 8080 });
  t.is(r.kind, 'tool_error');
  t.regex(text(r), /ECONNREFUSED/);
  t.notRegex(text(r), /timed out/);
  // The resolver is reachable on port 53 only.
  t.like(await run(egress, 'udpAsk', { host: PRIVATE, port: 5300, text: 'ping' }), { kind: 'tool_error' });
  for (const host of ['169.254.169.254', '10.0.0.1', '192.168.1.1', '100.64.0.1']) {
    const blocked = await run(egress, 'connect', { host, port: 80 });
    t.is(blocked.kind, 'tool_error', host);
    t.regex(text(blocked), /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/, host);
  }
});

test.serial('neither the host (through the gateway or its own address) nor its loopback is reachable', async (t) => {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.end('host secret');
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const own = await run(egress, 'interfaces');
  const sandboxIp = own.kind === 'ok' ? (own.output as Record<string, string[]>).eth0[0].split('/')[0] : '';
  const gateway = sandboxIp.replace(/\d+$/, (last) => String((Number(last) & ~3) + 1));
  const hostIps = Object.values(os.networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4' && !i.internal)
    .map((i) => i!.address);
  for (const host of [gateway, '127.0.0.1', ...hostIps]) {
    const r = await run(egress, 'connect', { host, port });
    t.is(r.kind, 'tool_error', host);
    t.regex(text(r), /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/, host);
  }
  t.is(connections, 0);
});

test.serial('without egress (the default) a sandbox has loopback only and reaches nothing', async (t) => {
  const r = await run(offline, 'interfaces');
  if (r.kind !== 'ok') return t.fail(text(r));
  t.deepEqual(Object.keys(r.output as object), ['lo']);
  const outside = await run(offline, 'connect', { host: PUBLIC, port: 8080 });
  t.is(outside.kind, 'tool_error');
  t.regex(text(outside), /ENETUNREACH|EHOSTUNREACH/);
});

test.serial('a tool that does not declare network gets no egress from an egress-mode runner', async (t) => {
  const r = await run(egress, 'interfaces', {}, false);
  if (r.kind !== 'ok') return t.fail(text(r));
  t.deepEqual(Object.keys(r.output as object), ['lo']);
  const outside = await run(egress, 'connect', { host: PUBLIC, port: 8080 }, false);
  t.is(outside.kind, 'tool_error');
  t.regex(text(outside), /ENETUNREACH|EHOSTUNREACH/);
  // The warm pool holds sandboxes without network only; egress ones are booted per execution.
  t.is(egress.egressPool?.stats().ready, 0);
});

test.serial('every network namespace is removed with its sandbox', async (t) => {
  const own = createGvisorRunner({
    poolSize: 1,
    network: 'egress',
    packageCacheDir: cache.dir,
    stateDir: stateDirs[0],
    egress: { subnet: SUBNET, dns: [PRIVATE] },
  });
  await own.pool.whenFull(30_000);
  t.deepEqual(
    ourNamespaces().filter((n) => !namespacesBefore.includes(n)),
    [],
    'pooled sandboxes have no network namespace',
  );
  const r = await own.execute({ pkg: cache.pkg('hostile'), exportName: 'interfaces', params: {}, env: {}, timeoutMs: 20_000, network: true });
  t.like(r, { kind: 'ok' });
  t.true(Object.keys((r as { output: object }).output).includes('eth0'), 'the egress sandbox had a namespace of its own');
  await own.close();
  // Once destructions have finished, no namespace is left: egress sandboxes are never pooled.
  const left = () => ourNamespaces().filter((n) => !namespacesBefore.includes(n)).length;
  t.is(await settle(left, (n) => n === 0, { ms: 60_000 }), 0);
});

test.serial('an MCP server that lists its tools from the network is described with egress when it declares network, and only then', async (t) => {
  const pkg = { ...cache.pkg('mcp-net'), mcp: { bin: 'server.cjs', args: [PUBLIC, '8080'] } };
  const withNetwork = await egress.describe(pkg, { timeoutMs: 30_000, network: true });
  if (withNetwork.kind !== 'ok') return t.fail(JSON.stringify(withNetwork));
  t.deepEqual(
    withNetwork.tools.map((x) => x.exportName),
    ['hello_from_the_internet'],
  );
  // Not declared, or a runner without egress: no network, and the server's own error says so.
  for (const [runner, network] of [
    [egress, false],
    [offline, true],
  ] as const) {
    const d = await runner.describe(pkg, { timeoutMs: 30_000, network });
    t.not(d.kind, 'ok', `network ${network} on the ${runner === egress ? 'egress' : 'offline'} runner`);
    t.regex(JSON.stringify(d), /fetch failed/);
  }
});
