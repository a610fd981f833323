/** Configuration parsing of the egress settings: what an operator writes, and the message a mistake gets. */
import test from 'ava';
import fs from 'node:fs';
import { CONFIG_VARIABLES, loadConfig } from '../core/infra/config.js';
import { namesOf, parseSubnet, ruleset } from '../sandbox/egress.js';

test('egress defaults: a private /16, resolvers from the host', (t) => {
  const config = loadConfig({});
  t.is(config.SANDBOX_NETWORK, 'none');
  t.is(config.SANDBOX_EGRESS_SUBNET, '10.213.0.0/16');
  t.deepEqual(config.SANDBOX_DNS, []);
});

test('SANDBOX_DNS takes a comma-separated list of IPv4 resolvers', (t) => {
  t.deepEqual(loadConfig({ SANDBOX_DNS: '1.1.1.1, 9.9.9.9' }).SANDBOX_DNS, ['1.1.1.1', '9.9.9.9']);
  t.throws(() => loadConfig({ SANDBOX_DNS: '1.1.1.1,resolver.local' }), { message: /SANDBOX_DNS/ });
});

test('the egress subnet must be an IPv4 CIDR from /16 to /24 without host bits', (t) => {
  t.throws(() => loadConfig({ SANDBOX_EGRESS_SUBNET: '10.213.0.0' }), { message: /SANDBOX_EGRESS_SUBNET/ });
  t.deepEqual(parseSubnet('10.213.0.0/16'), { base: 0x0ad50000, prefix: 16, slots: 16384 });
  t.is(parseSubnet('10.214.0.0/24').slots, 64);
  t.throws(() => parseSubnet('10.0.0.0/8'), { message: /from \/16 to \/24/ });
  t.throws(() => parseSubnet('10.213.0.1/24'), { message: /host bits/ });
});

test("a ruleset judges only its own subnet's links, and guards forwarding only for what is not a sandbox's", (t) => {
  const a = namesOf('10.213.0.0/16');
  const b = namesOf('10.214.0.0/24');
  t.not(a.link, b.link);
  t.true(a.link.length + 5 <= 15, 'link names fit the kernel limit with 5 digits');
  const rules = ruleset({ subnet: '10.213.0.0/16', resolvers: ['10.255.255.53'], guardForwarding: true });
  t.true(rules.includes(`iifname "${a.link}*" goto sandbox_out`));
  t.false(rules.includes(b.link));
  t.true(rules.includes('iifname != "tse*" oifname != "tse*" drop'));
  t.false(ruleset({ subnet: '10.213.0.0/16', resolvers: [], guardForwarding: false }).includes('dport 53'));
});

test("the README's configuration table names every variable the code reads", (t) => {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Architecture'));
  // `RATE_LIMIT_{FREE,PRO}_{MINUTE,DAY}` in the table stands for each combination.
  const named = new Set<string>();
  for (const [, cell] of table.matchAll(/`([A-Z0-9_{},]+)`/g)) {
    const expand = (s: string): string[] => {
      const m = /\{([^}]*)\}/.exec(s);
      return m ? m[1]!.split(',').flatMap((alt) => expand(s.replace(m[0], alt))) : [s];
    };
    for (const name of expand(cell!)) named.add(name);
  }
  t.deepEqual(
    CONFIG_VARIABLES.filter((v) => !named.has(v)),
    [],
    'variables missing from the README',
  );
});
