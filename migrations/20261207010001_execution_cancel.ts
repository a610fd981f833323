import type { Knex } from 'knex';

// Cancelling an execution (POST /api/executions/:id/cancel, MCP notifications/cancelled and tasks/cancel): a running
// one is flagged here, and the worker holding it, told by NOTIFY (toolshed_cancel), stops its sandbox; the flag is
// what a worker that missed the NOTIFY, or a later attempt, reads. `mcp_request` is the digest of the MCP tools/call
// that queued the execution (who called, through which collection, with which JSON-RPC id), which a
// notifications/cancelled names; the partial index covers only the executions not yet final.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table executions add column cancel_requested_at timestamptz, add column mcp_request text');
  await knex.raw(`create index executions_active_mcp_request on executions (mcp_request) where mcp_request is not null and status in ('queued', 'running')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists executions_active_mcp_request');
  await knex.raw('alter table executions drop column cancel_requested_at, drop column mcp_request');
}
