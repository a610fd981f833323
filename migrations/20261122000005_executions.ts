import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('executions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.uuid('user_id').references('users.id').onDelete('SET NULL');
    /** Which API key ran it (reuse mode never shares a sandbox across keys). */
    t.uuid('api_key_id').references('api_keys.id').onDelete('SET NULL');
    /** api | mcp | agent | scenario */
    t.text('origin').notNullable().defaultTo('api');
    t.text('status').notNullable().defaultTo('queued');
    t.jsonb('params').notNullable().defaultTo('{}');
    t.jsonb('result');
    /** { code, message } — never contains env values (they are redacted before storing). */
    t.jsonb('error');
    t.integer('execution_time_ms');
    t.integer('attempts').notNullable().defaultTo(0);
    /** The Graphile Worker job that runs it (the reaper unlocks it when its worker died). */
    t.bigInteger('job_id');
    /** The worker that holds it while running; the reaper fails executions whose worker is gone. */
    t.text('worker_id');
    t.timestamp('heartbeat_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.check("status in ('queued','running','succeeded','failed','timed_out')", [], 'executions_status_check');
  });
  await knex.raw("create index executions_running on executions (heartbeat_at) where status = 'running'");
  await knex.raw('create index executions_tool_created on executions (tool_id, created_at desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('executions');
}
