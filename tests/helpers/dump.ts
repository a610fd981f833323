/** Every row of every table in every schema of a database, as text: what a dump would hold (for leak checks). */
import pg from 'pg';

export async function dumpDatabase(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows: tables } = await c.query(
      `select table_schema, table_name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    let out = '';
    for (const t of tables) {
      const { rows } = await c.query(`select row_to_json(x)::text as j from "${t.table_schema}"."${t.table_name}" x`);
      out += `${t.table_schema}.${t.table_name}\n${rows.map((r) => r.j).join('\n')}\n`;
    }
    return out;
  } finally {
    await c.end();
  }
}
