/**
 * The toolshed CLI: `users:create <username> [--tier pro] [--name N] [--json]`, `packages:add <source> [--official]`,
 * `migrate`. It works on the same database as the service (DATABASE_URL, or the embedded one under DATA_DIR).
 * `eval <collection> …` (bin/eval.ts) is a client of any Toolshed over HTTP instead.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/infra/config.js';
import { createDb } from '../core/infra/db.js';
import { createLogger } from '../core/infra/logger.js';
import { migrateAll, resolveDatabase, withGeneratedSecrets } from '../core/infra/bootstrap.js';
import { createUserWithKey, newUserSchema } from '../core/auth/create-account.js';
import { findUserByUsername } from '../core/repos/users.js';
import { toolNamesAndHealth } from '../core/repos/tools.js';

const USAGE = `usage:
  toolshed users:create <username> [--tier free|pro|enterprise] [--name "Full Name"] [--json]
  toolshed packages:add <npm:name@range | path:/abs/dir> [--official] [--json]
  toolshed migrate
  toolshed eval <collection> [--repeat N] [--min-pass-rate R] [--baseline ID|latest] [--junit FILE] [--json]`;

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'eval') return (await import('./eval.js')).runEval(argv.slice(1));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { tier: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' }, official: { type: 'boolean' } },
  });
  const [command, arg] = positionals;
  if (!command || !['users:create', 'packages:add', 'migrate'].includes(command) || (command !== 'migrate' && !arg)) {
    console.error(USAGE);
    return 2;
  }
  const base = loadConfig(process.env);
  const logger = createLogger(values.json ? 'silent' : 'warn');
  const config = await withGeneratedSecrets(base, logger);
  const database = await resolveDatabase(config, logger);
  const db = createDb(database.url, { max: 4 });
  try {
    await migrateAll(database.url);
    if (command === 'migrate') {
      console.log('migrations are up to date');
      return 0;
    }
    if (command === 'users:create') {
      const parsed = newUserSchema.safeParse({ username: arg, tier: values.tier, name: values.name });
      if (!parsed.success) {
        console.error(parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('\n'));
        return 2;
      }
      if (await findUserByUsername(db, parsed.data.username)) {
        console.error(`username '${parsed.data.username}' is taken`);
        return 1;
      }
      const { user, key, secret } = await createUserWithKey(db, parsed.data);
      const out = {
        user: { id: user.id, username: user.username, name: user.name, tier: user.tier },
        apiKey: { id: key.id, key: secret, prefix: key.prefix, createdAt: key.created_at },
      };
      // The key is printed once, here, for the operator who asked for it.
      console.log(values.json ? JSON.stringify(out) : `created ${user.username} (${user.tier})\nAPI key (shown once): ${secret}`);
      return 0;
    }
    // Only imports need a sandbox; load it on demand.
    const { createSandboxRunner } = await import('../sandbox/index.js');
    const { importPackage } = await import('../worker/import/index.js');
    const sandbox = await createSandboxRunner(config, logger);
    try {
      const llm = (await import('../core/llm/index.js')).createLlmProvider(config);
      const result = await importPackage({ config, db, logger, sandbox, llm }, { source: arg!, official: values.official ?? false });
      if (!result.ok) {
        console.error(`import failed: ${result.error.message}`);
        return 1;
      }
      const tools = await toolNamesAndHealth(db, result.toolIds);
      console.log(values.json ? JSON.stringify({ packageId: result.packageId, tools }) : tools.map((t) => `${t.name}\t${t.health_status}`).join('\n'));
      return 0;
    } finally {
      await sandbox.close();
    }
  } finally {
    await db.destroy();
    await database.embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
