/**
 * How an operation runs, decided once for both runners (sandbox/run-path.ts): which MCP calls go to a warm server and
 * which get a server of their own, when a caller's reused sandbox serves an execution, and that network is given only
 * where the runner has egress (and never to a warm server or a reused sandbox). No sandbox: milliseconds.
 */
import test from 'ava';
import { runPathOf, type RunnerAbilities } from '../sandbox/run-path.js';
import type { PackageRef } from '../sandbox/types.js';

const module: PackageRef = { name: 'm', version: '1.0.0', dir: '/cache/m@1.0.0' };
const server: PackageRef = { ...module, mcp: { bin: 'dist/index.js', args: [], inGuest: true } };
const gvisor: RunnerAbilities = { egress: false, reuse: true, warmMcp: true };
const gvisorEgress: RunnerAbilities = { ...gvisor, egress: true };
const processRunner: RunnerAbilities = { egress: false, reuse: false, warmMcp: false };

test('an MCP call goes to a warm server, unless it needs network (a cold egress server) or the runner keeps none', (t) => {
  t.deepEqual(runPathOf({ op: 'execute', pkg: server }, gvisor), { kind: 'mcp-warm' });
  t.deepEqual(runPathOf({ op: 'execute', pkg: server, network: true }, gvisor), { kind: 'mcp-warm' }, 'no egress: no network to give');
  t.deepEqual(runPathOf({ op: 'execute', pkg: server, network: true }, gvisorEgress), { kind: 'mcp-server', network: true });
  t.deepEqual(runPathOf({ op: 'execute', pkg: server, reuseKey: 'k' }, processRunner), { kind: 'mcp-server', network: false });
});

test('describing an MCP server starts one for it, with network only when allowed and available', (t) => {
  t.deepEqual(runPathOf({ op: 'describe', pkg: server }, gvisor), { kind: 'mcp-server', network: false });
  t.deepEqual(runPathOf({ op: 'describe', pkg: server, network: true }, gvisorEgress), { kind: 'mcp-server', network: true });
  t.deepEqual(runPathOf({ op: 'describe', pkg: server, network: true }, processRunner), { kind: 'mcp-server', network: false });
});

test("a module's execution uses the caller's reused sandbox only with a reuse key, reuse mode and no network", (t) => {
  t.deepEqual(runPathOf({ op: 'execute', pkg: module, reuseKey: 'k' }, gvisor), { kind: 'module-reuse', reuseKey: 'k' });
  t.deepEqual(runPathOf({ op: 'execute', pkg: module }, gvisor), { kind: 'module', network: false });
  t.deepEqual(runPathOf({ op: 'execute', pkg: module, reuseKey: 'k', network: true }, gvisorEgress), { kind: 'module', network: true });
  t.deepEqual(runPathOf({ op: 'execute', pkg: module, reuseKey: 'k', network: true }, gvisor), { kind: 'module-reuse', reuseKey: 'k' });
  t.deepEqual(runPathOf({ op: 'execute', pkg: module, reuseKey: 'k' }, processRunner), { kind: 'module', network: false });
  t.deepEqual(runPathOf({ op: 'describe', pkg: module, reuseKey: 'k', network: true }, gvisorEgress), { kind: 'module', network: false });
});
