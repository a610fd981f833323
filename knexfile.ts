// knex CLI configuration: the same migrations the service runs at start (DATABASE_URL required here).
const config = {
  client: 'pg',
  connection: process.env.DATABASE_URL,
  migrations: { directory: './migrations', loadExtensions: ['.ts', '.js'] },
};
export default config;
