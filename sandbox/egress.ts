/**
 * `SANDBOX_NETWORK=egress`: sandboxes that reach public internet addresses and nothing else.
 *
 * Each sandbox gets a network namespace of its own (`tsn<tag>-<i>`) joined to the host by a veth pair
 * (`tse<tag>-<i>` on the host, `eth0` inside) on a /30 of `subnet`, IPv4 only (no IPv6 address is ever configured),
 * with a default route to the host. gVisor (`runsc --network=sandbox`) takes the interface over with its own network stack, so the guest
 * still never talks to the host kernel's. On the host, one nftables table per subnet:
 *   - forward: traffic from a sandbox interface to loopback, private, link-local, shared, multicast, reserved and
 *     documentation ranges (and to the sandbox subnet itself or any sandbox link, so sandboxes never reach each
 *     other) is rejected; the rest is forwarded and masqueraded; nothing may open a connection towards a sandbox;
 *   - input: nothing from a sandbox reaches the host itself (its own addresses, Postgres, the API);
 *   - the one exception: DNS (port 53) to the configured resolvers, which are usually private addresses.
 * The host's IPv4 forwarding is switched on; if it was off, the table also keeps the host from forwarding anything
 * that is not a sandbox's.
 *
 * Debian's runsc (20221219) decides that it was started in the host's network namespace when
 * /proc/sys/net/core/rmem_default exists, which newer kernels show in every namespace; `runsc run` is therefore
 * started in a mount namespace of its own where /proc/sys/net is covered by an empty tmpfs (see `launcher`). Its mounts
 * are slaves of the host's: nothing done inside leaks out, and the package mounted into a sandbox's view after boot
 * (package-view.ts) reaches the sandbox's gofer.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runCommand, systemBinary } from './command.js';

/** Default sandbox subnet (SANDBOX_EGRESS_SUBNET): 16,384 sandboxes' /30s. */
export const DEFAULT_EGRESS_SUBNET = '10.213.0.0/16';

/** IPv4 ranges that are not the public internet (RFC 6890 special-purpose registry, plus multicast and reserved). */
export const BLOCKED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/3',
];

export interface EgressOptions {
  /** IPv4 CIDR, /16 to /24, carved into one /30 per sandbox. */
  subnet: string;
  /** Resolvers the sandboxes may query (port 53 only); default: the host's non-loopback IPv4 nameservers. */
  dns?: string[];
  /** Where the sandboxes' resolv.conf is written. */
  stateDir: string;
  ipBinary?: string;
  nftBinary?: string;
  /** Told once when no resolver is usable (sandboxes then reach addresses, not names). */
  warn?: (message: string) => void;
}

export interface NetLease {
  /** The network namespace to put in the OCI spec. */
  readonly nsPath: string;
  /** The host's end of the veth (the sandbox's gateway) and the sandbox's own address. */
  readonly hostAddress: string;
  readonly sandboxAddress: string;
  /** Removes the namespace and the veth pair; call once the sandbox is gone. */
  release(): Promise<void>;
}

export interface EgressNetwork {
  readonly subnet: string;
  readonly resolvers: string[];
  /** Host path of the resolv.conf mounted read-only at /etc/resolv.conf in every sandbox. */
  readonly resolvConf: string;
  /** Command prefix under which `runsc run` must be started (see the module comment). */
  readonly launcher: string[];
  lease(): Promise<NetLease>;
}

/**
 * Names of one subnet's namespaces and host-side links: `tsn<tag>-<i>` and `tse<tag>-<i>` (≤ 15 characters), the tag
 * a hash of the subnet, so that installations with different subnets on one host never judge each other's sandboxes.
 * Every sandbox link of every installation starts with `tse`.
 */
export function namesOf(subnet: string): { ns: string; link: string; table: string } {
  const tag = createHash('sha256').update(subnet).digest('hex').slice(0, 4);
  return { ns: `tsn${tag}-`, link: `tse${tag}-`, table: `toolshed_${subnet.replace(/[./]/g, '_')}` };
}

/**
 * Deletes a subnet's nftables table (for tests and benchmarks that used a subnet of their own; a service leaves its
 * table in place, since other worker processes on the host may still use it).
 */
export function removeRules(subnet: string): void {
  const nft = systemBinary('nft');
  if (!nft) return;
  try {
    execFileSync(nft, ['delete', 'table', 'inet', namesOf(subnet).table], { stdio: 'ignore', env: {} });
  } catch {
    // never created
  }
}
const ANY_SANDBOX_LINK = '"tse*"';
/** A namespace younger than this may belong to a sandbox of another process that is about to start. */
const STALE_AFTER_MS = 60_000;

const toInt = (ip: string) => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

export function parseSubnet(cidr: string): { base: number; prefix: number; slots: number } {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr);
  const prefix = m ? Number(m[2]) : NaN;
  if (!m || m[1].split('.').some((p) => Number(p) > 255) || !(prefix >= 16 && prefix <= 24)) {
    throw new Error(`SANDBOX_EGRESS_SUBNET must be an IPv4 CIDR from /16 to /24, got ${JSON.stringify(cidr)}`);
  }
  const base = toInt(m[1]);
  if (base % 2 ** (32 - prefix) !== 0) throw new Error(`SANDBOX_EGRESS_SUBNET ${cidr} has host bits set`);
  return { base, prefix, slots: 2 ** (30 - prefix) };
}

/** The host's IPv4 nameservers that a sandbox can reach through the host (loopback resolvers cannot be). */
export function hostResolvers(resolvConf = '/etc/resolv.conf'): string[] {
  let text = '';
  try {
    text = fs.readFileSync(resolvConf, 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/^\s*nameserver\s+(\d{1,3}(?:\.\d{1,3}){3})\s*$/gm)].map((m) => m[1]).filter((ip) => !ip.startsWith('127.'));
}

/** The nftables ruleset of one egress subnet, replacing any earlier version atomically when loaded with `nft -f`. */
export function ruleset(o: { subnet: string; resolvers: string[]; guardForwarding: boolean }): string {
  const { link, table } = namesOf(o.subnet);
  const sandboxIf = `"${link}*"`;
  const dns = o.resolvers.length > 0 ? `{ ${o.resolvers.join(', ')} }` : undefined;
  const reject = 'meta l4proto tcp reject with tcp reset\n    reject with icmpx type admin-prohibited';
  return `table inet ${table}
delete table inet ${table}
table inet ${table} {
  set blocked {
    type ipv4_addr; flags interval; auto-merge
    elements = { ${[...BLOCKED_RANGES, o.subnet].join(', ')} }
  }
  chain sandbox_out {
    meta nfproto ipv6 drop
${dns ? `    ip daddr ${dns} meta l4proto { tcp, udp } th dport 53 accept\n` : ''}    oifname ${ANY_SANDBOX_LINK} goto refuse
    ip daddr @blocked goto refuse
    accept
  }
  chain refuse {
    ${reject}
  }
  chain forward {
    type filter hook forward priority filter - 10; policy accept;
    iifname ${sandboxIf} goto sandbox_out
    oifname ${sandboxIf} ct state established,related accept
    oifname ${sandboxIf} drop
${o.guardForwarding ? `    iifname != ${ANY_SANDBOX_LINK} oifname != ${ANY_SANDBOX_LINK} drop\n` : ''}  }
  chain input {
    type filter hook input priority filter - 10; policy accept;
${dns ? `    iifname ${sandboxIf} ip daddr ${dns} meta l4proto { tcp, udp } th dport 53 accept\n` : ''}    iifname ${sandboxIf} goto refuse
  }
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr ${o.subnet} oifname != ${ANY_SANDBOX_LINK} masquerade
  }
}
`;
}

function findBinary(name: string, what: string): string {
  const found = systemBinary(name);
  if (!found) throw new Error(`SANDBOX_NETWORK=egress needs ${what} (${name}); on Debian: apt-get install -y iproute2 nftables`);
  return found;
}

/**
 * Prepares the host (nftables table, IPv4 forwarding, resolv.conf, leftovers of dead processes) and returns the
 * lease maker. Synchronous: it runs once, before the first sandbox boots. Needs root (CAP_NET_ADMIN).
 */
export function setupEgress(o: EgressOptions): EgressNetwork {
  const { base, slots } = parseSubnet(o.subnet);
  const ip = o.ipBinary ?? findBinary('ip', 'iproute2');
  const nft = o.nftBinary ?? findBinary('nft', 'nftables');
  const mount = findBinary('mount', 'util-linux');
  const unshare = findBinary('unshare', 'util-linux');
  const resolvers = o.dns && o.dns.length > 0 ? o.dns : hostResolvers();
  if (resolvers.length === 0) {
    o.warn?.('SANDBOX_NETWORK=egress: no resolver a sandbox can reach (the host has none or only loopback ones); set SANDBOX_DNS');
  }

  // Forwarding: remember whether it was off before we first switched it on (for this boot of the host), so that
  // switching it on does not turn the host into a router for anything but sandboxes.
  const forwardingFile = '/proc/sys/net/ipv4/ip_forward';
  const marker = '/run/toolshed-egress-forwarding-was-off';
  if (fs.readFileSync(forwardingFile, 'utf8').trim() === '0') fs.writeFileSync(marker, '');
  const names = namesOf(o.subnet);
  try {
    execFileSync(nft, ['-f', '-'], {
      input: ruleset({ subnet: o.subnet, resolvers, guardForwarding: fs.existsSync(marker) }),
      env: {},
      stdio: ['pipe', 'ignore', 'pipe'],
    });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`SANDBOX_NETWORK=egress: loading the nftables rules failed (needs root): ${stderr.slice(0, 400)}`);
  }
  fs.writeFileSync(forwardingFile, '1');

  const dir = path.join(o.stateDir, 'egress');
  fs.mkdirSync(dir, { recursive: true });
  const resolvConf = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolvConf, `${resolvers.map((r) => `nameserver ${r}\n`).join('')}options timeout:2 attempts:2\n`, { mode: 0o644 });

  removeStale(ip, names);

  const inUse = new Set<number>();
  let next = Math.floor(Math.random() * slots);

  async function create(i: number): Promise<NetLease | 'taken'> {
    const ns = `${names.ns}${i}`;
    const link = `${names.link}${i}`;
    const hostAddress = toIp(base + 4 * i + 1);
    const sandboxAddress = toIp(base + 4 * i + 2);
    const host = await runCommand(ip, ['-batch', '-'], {
      input: [
        `netns add ${ns}`,
        `link add ${link} type veth peer name eth0 netns ${ns}`,
        `link set dev ${link} addrgenmode none`,
        `addr add ${hostAddress}/30 dev ${link}`,
        `link set dev ${link} up`,
      ].join('\n'),
    });
    if (host.code !== 0 && /File exists/i.test(host.stderr)) {
      // Another process holds this slot (its namespace or link exists): leave it alone.
      if (/netns|namespace/i.test(host.stderr)) return 'taken';
      await runCommand(ip, ['netns', 'del', ns]);
      return 'taken';
    }
    const release = async () => {
      await runCommand(ip, ['-force', '-batch', '-'], { input: `link del ${link}\nnetns del ${ns}\n` });
      inUse.delete(i);
    };
    if (host.code !== 0) {
      await release();
      throw new Error(`egress: setting up ${link} failed: ${host.stderr.trim().slice(0, 300)}`);
    }
    const inside = await runCommand(ip, ['-n', ns, '-batch', '-'], {
      input: [
        'link set dev eth0 addrgenmode none',
        `addr add ${sandboxAddress}/30 dev eth0`,
        'link set dev eth0 up',
        'link set dev lo up',
        `route add default via ${hostAddress}`,
      ].join('\n'),
    });
    if (inside.code !== 0) {
      await release();
      throw new Error(`egress: setting up ${ns} failed: ${inside.stderr.trim().slice(0, 300)}`);
    }
    return { nsPath: `/run/netns/${ns}`, hostAddress, sandboxAddress, release };
  }

  return {
    subnet: o.subnet,
    resolvers,
    resolvConf,
    launcher: [
      unshare,
      '--mount',
      '--propagation',
      'slave',
      '--',
      '/bin/sh',
      '-c',
      `${mount} -t tmpfs -o size=4k,mode=555 toolshed /proc/sys/net && exec "$@"`,
      'runsc',
    ],
    async lease() {
      for (let tried = 0; tried < slots; tried++) {
        const i = next;
        next = (next + 1) % slots;
        if (inUse.has(i)) continue;
        inUse.add(i);
        const lease = await create(i).catch((err: unknown) => {
          inUse.delete(i);
          throw err;
        });
        if (lease !== 'taken') return lease;
        inUse.delete(i);
      }
      throw new Error(`egress: all ${slots} sandbox networks of ${o.subnet} are in use`);
    },
  };
}

/** Namespaces of ours that no process uses any more (their sandbox ended with a process that was killed). */
function removeStale(ip: string, names: { ns: string; link: string }): void {
  let found: string[] = [];
  try {
    found = fs.readdirSync('/run/netns').filter((n) => new RegExp(`^${names.ns}\\d+$`).test(n));
  } catch {
    return;
  }
  for (const name of found) {
    try {
      if (Date.now() - fs.statSync(path.join('/run/netns', name)).mtimeMs < STALE_AFTER_MS) continue;
      if (execFileSync(ip, ['netns', 'pids', name], { encoding: 'utf8', env: {} }).trim() !== '') continue;
      execFileSync(ip, ['-force', '-batch', '-'], {
        input: `link del ${names.link}${name.slice(names.ns.length)}\nnetns del ${name}\n`,
        env: {},
        stdio: ['pipe', 'ignore', 'ignore'],
      });
    } catch {
      // gone meanwhile, or not ours to judge
    }
  }
}
