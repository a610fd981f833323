/** agents and agent_collections: a user's agents and the collections whose tools each one gets. */
import type { Db } from '../infra/db.js';

export interface AgentRow {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  system_prompt: string | null;
  model: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AgentCollectionRow {
  agent_id: string;
  id: string;
  uid: string;
  name: string;
  is_public: boolean;
  owner_id: string;
}

export async function insertAgent(
  db: Db,
  a: { userId: string; name: string; description: string | null; systemPrompt: string | null; model: string | null; collectionIds: string[] },
): Promise<string> {
  const [row] = await db('agents')
    .insert({ user_id: a.userId, name: a.name, description: a.description, system_prompt: a.systemPrompt, model: a.model })
    .returning('id');
  if (a.collectionIds.length) {
    await db('agent_collections').insert(a.collectionIds.map((collection_id) => ({ agent_id: row.id, collection_id })));
  }
  return row.id;
}

export async function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db('agents').where({ id }).first();
}

/** The user's agents, newest first. */
export async function listAgents(db: Db, userId: string): Promise<AgentRow[]> {
  return db('agents')
    .where({ user_id: userId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
}

/**
 * The collections of the given agents that each agent's owner can still see (public, or the owner's own: one made
 * private by someone else since is left out, name and all), each agent's in the order of their names.
 */
export async function agentCollections(db: Db, agentIds: string[]): Promise<AgentCollectionRow[]> {
  if (agentIds.length === 0) return [];
  return db('agent_collections as ac')
    .join('collections as c', 'c.id', 'ac.collection_id')
    .join('agents as a', 'a.id', 'ac.agent_id')
    .whereIn('ac.agent_id', agentIds)
    .where((q) => q.where('c.is_public', true).orWhereRaw('c.owner_id = a.user_id'))
    .orderBy([{ column: 'c.name' }, { column: 'c.id' }])
    .select('ac.agent_id', 'c.id', 'c.uid', 'c.name', 'c.is_public', 'c.owner_id');
}
