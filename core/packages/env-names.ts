/**
 * The one definition of which environment variable names hold a credential or a service's address, and of the
 * placeholders they read as while a package is described (never while it runs). The guest's discovery
 * (sandbox/guest/discover.cjs), which sees only its own folder, reads the same data from sandbox/guest/env-names.cjs,
 * generated from ENV_NAMES (`npx tsx bin/env-names.ts`); tests/env-names.test.ts keeps the two the same.
 */
export const ENV_NAMES = {
  credential: '(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PAT|ACCESS_KEY_ID|SECRET_ACCESS_KEY)$',
  address: '(^|_)(URL|URI|ENDPOINT)$',
  placeholder: 'toolshed-placeholder',
  placeholderUrl: 'http://toolshed-placeholder.invalid',
};

/** Names that hold a credential (`…_API_KEY`, `…_TOKEN`, `…_PAT`, `…_SECRET_ACCESS_KEY`). */
export const CREDENTIAL = new RegExp(ENV_NAMES.credential);
/** Names that hold the address of a service (`AZURE_DEVOPS_ORG_URL`, `ES_URL`, `…_URI`, `…_ENDPOINT`). */
export const ADDRESS = new RegExp(ENV_NAMES.address);
/** The value a declared variable gets while the package is described. */
export const PLACEHOLDER_VALUE = ENV_NAMES.placeholder;
/** The placeholder of an address-like variable. */
export const PLACEHOLDER_URL = ENV_NAMES.placeholderUrl;

/** The guest's copy, as sandbox/guest/env-names.cjs holds it (a module: the guest's snapshot bundles its .cjs files). */
export const guestEnvNamesModule = () =>
  `'use strict';\n// Generated from core/packages/env-names.ts by bin/env-names.ts: edit that file, not this one.\nmodule.exports = ${JSON.stringify(ENV_NAMES, null, 2)};\n`;
