import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scenarios', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('collection_id').notNullable().references('collections.id').onDelete('CASCADE');
    t.uuid('created_by').references('users.id').onDelete('SET NULL');
    t.text('prompt').notNullable();
    t.text('name').notNullable();
    t.text('description');
    t.specificType('tags', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('assertions');
    /** Embedding of the prompt (for similarity), with the model that made it. */
    t.specificType('embedding', 'real[]');
    t.text('embedding_model');
    t.double('quality_score').notNullable().defaultTo(0.5);
    t.integer('total_runs').notNullable().defaultTo(0);
    t.timestamp('last_run_at', { useTz: true });
    t.text('last_run_status');
    t.integer('consecutive_passes').notNullable().defaultTo(0);
    t.integer('consecutive_fails').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("last_run_status is null or last_run_status in ('pass','fail')", [], 'scenarios_last_status_check');
  });
  await knex.raw('create index scenarios_collection on scenarios (collection_id)');
  await knex.raw('create index scenarios_tags on scenarios using gin (tags)');
  await knex.schema.createTable('scenario_batches', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('collection_id').notNullable().references('collections.id').onDelete('CASCADE');
    t.uuid('user_id').references('users.id').onDelete('SET NULL');
    t.integer('total').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
  });
  await knex.schema.createTable('scenario_runs', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('scenario_id').notNullable().references('scenarios.id').onDelete('CASCADE');
    t.uuid('user_id').references('users.id').onDelete('SET NULL');
    t.uuid('batch_id').references('scenario_batches.id').onDelete('SET NULL');
    t.text('status').notNullable().defaultTo('queued');
    t.boolean('success');
    t.text('verdict');
    t.text('reason');
    /** { model, provider, temperature } of the agent and the evaluator, and tool package versions. */
    t.jsonb('evaluator');
    t.jsonb('agent');
    t.jsonb('usage');
    t.jsonb('steps').notNullable().defaultTo('[]');
    t.text('final_text');
    t.jsonb('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.check("status in ('queued','running','completed','failed')", [], 'scenario_runs_status_check');
  });
  await knex.raw('create index scenario_runs_scenario_created on scenario_runs (scenario_id, created_at desc)');
  await knex.raw('create index scenario_runs_batch on scenario_runs (batch_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('scenario_runs');
  await knex.schema.dropTable('scenario_batches');
  await knex.schema.dropTable('scenarios');
}
