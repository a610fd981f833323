/**
 * One definition of credential and address names and of the placeholders (core/packages/env-names.ts): the guest's
 * copy (sandbox/guest/env-names.cjs, the only folder the guest sees) is generated from it, and the host's patterns and
 * the guest's discovery agree on what is an address (the guest once lacked `URI`).
 */
import test from 'ava';
import path from 'node:path';
import { createRequire } from 'node:module';
import { SOURCE_ROOT } from './helpers/source-root.js';
import { ADDRESS, CREDENTIAL, ENV_NAMES, PLACEHOLDER_URL, PLACEHOLDER_VALUE } from '../core/packages/env-names.js';
import { placeholderEnv } from '../core/packages/mcp-server.js';

const require = createRequire(import.meta.url);

test("the guest's env-names.cjs holds the host's definition (generated: npx tsx bin/env-names.ts)", (t) => {
  t.deepEqual(require(path.join(SOURCE_ROOT, 'sandbox/guest/env-names.cjs')), ENV_NAMES);
});

test('credential and address names, as the host reads them and as the guest’s discovery gives them placeholders', (t) => {
  for (const n of ['FIRECRAWL_API_KEY', 'GITHUB_TOKEN', 'AZURE_DEVOPS_PAT', 'AWS_SECRET_ACCESS_KEY']) t.true(CREDENTIAL.test(n), n);
  for (const n of ['AZURE_DEVOPS_ORG_URL', 'MONGODB_URI', 'SEARXNG_ENDPOINT']) t.true(ADDRESS.test(n), n);
  t.false(CREDENTIAL.test('KEYBOARD_LAYOUT'));
  // The guest's discovery: an unset address name read while describing reads as the placeholder URL, a URI too.
  const { watchEnv } = require(path.join(SOURCE_ROOT, 'sandbox/guest/discover.cjs'));
  const real = process.env;
  try {
    const watched = watchEnv();
    t.is(process.env.MONGODB_URI, PLACEHOLDER_URL);
    t.is(process.env.SERVICE_API_KEY, PLACEHOLDER_VALUE);
    t.deepEqual([...watched.read], ['MONGODB_URI', 'SERVICE_API_KEY']);
  } finally {
    process.env = real;
  }
  t.deepEqual(placeholderEnv([{ name: 'X_TOKEN', required: true }]), { X_TOKEN: PLACEHOLDER_VALUE });
});
