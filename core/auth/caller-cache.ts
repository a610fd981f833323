/**
 * Resolves API keys to callers with an in-process cache. A trigger NOTIFYs `toolshed_keys` when a key is revoked or
 * a user changes, and every process drops the entry at once; the revoking process drops it before it answers, so a
 * revoked key's next request is refused.
 * It also records each key's last use: at most once a minute per key per process, one UPDATE that nobody awaits, so
 * that neither its cost nor its failure reaches the request.
 */
import type { Knex } from 'knex';
import { CHANNELS, type Notifier } from '../infra/notify.js';
import { findCallerByKeyHash, touchApiKey } from '../repos/users.js';
import type { Caller } from '../types.js';

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;
/** last_used_at is written at most this often per key (and process). */
const TOUCH_EVERY_MS = 60_000;

export interface CallerCache {
  get(keyHash: string): Promise<Caller | undefined>;
  forget(keyHash?: string): void;
  stop(): void;
}

export async function createCallerCache(db: Knex, notifier: Notifier): Promise<CallerCache> {
  const entries = new Map<string, { caller: Caller | undefined; expires: number }>();
  let generation = 0;
  const forget = (hash?: string) => {
    generation++;
    if (hash === undefined || hash === '*') entries.clear();
    else entries.delete(hash);
  };
  const touched = new Map<string, number>();
  const touch = (caller: Caller | undefined) => {
    if (!caller?.keyId) return caller;
    const now = Date.now();
    if (now - (touched.get(caller.keyId) ?? 0) < TOUCH_EVERY_MS) return caller;
    if (touched.size >= MAX_ENTRIES) touched.clear();
    touched.set(caller.keyId, now);
    void touchApiKey(db, caller.keyId).catch(() => undefined);
    return caller;
  };
  const unsubscribe = await notifier.subscribe(CHANNELS.keys, (payload) => forget(payload));
  return {
    async get(hash) {
      const hit = entries.get(hash);
      if (hit && hit.expires > Date.now()) return touch(hit.caller);
      const gen = generation;
      const caller = await findCallerByKeyHash(db, hash);
      // Unknown keys are not cached: a key created a moment ago must work at once.
      if (caller && gen === generation) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(hash, { caller, expires: Date.now() + TTL_MS });
      }
      return touch(caller);
    },
    forget,
    stop: unsubscribe,
  };
}
