/**
 * One keyed cache of idle sandbox slots, for both kinds of sandbox kept between calls: reuse.ts (sandboxes bound to a
 * caller and a package) and mcp-warm.ts (MCP servers started ahead of their calls). Each key holds idle items; an item
 * is destroyed once idle for its time, and over all keys at most `maxIdle` are idle, past which the one idle longest
 * goes. Only bookkeeping and timers: what an item is, when it is parked and how it is destroyed are the owner's.
 */

export interface SlotsOptions<T> {
  /** An idle item unused for this long is destroyed (unless parked with a shorter time). */
  idleMs: number;
  /** Idle items over all keys, at most; parking one more destroys the one idle longest (of any key). */
  maxIdle: number;
  /** Destroys an item that leaves the cache without being taken; `closing`: the whole cache is closing. */
  destroy: (item: T, closing: boolean) => void | Promise<void>;
  /** An idle item of `key` was destroyed (expired, evicted, dropped): the owner may forget the key. */
  onGone?: (key: string) => void;
}

export interface Slots<T> {
  /** `item` waits idle for the next `take(key)`, at most `ttlMs` (default idleMs). */
  park(key: string, item: T, ttlMs?: number): void;
  /** The key's item idle most recently, no longer idle (the owner uses it, or parks or destroys it again). */
  take(key: string): T | undefined;
  /** Destroys `item` if it is idle (it died while waiting); false when it is not idle. */
  drop(key: string, item: T): boolean;
  /** Destroys the item idle longest of a key other than `except`; false when there is none. */
  evictOldest(except?: string): boolean;
  /** Idle items of `key`, or of all keys. */
  idle(key?: string): number;
  /** Destroys every idle item and parks nothing more. */
  close(): Promise<void>;
}

export function createSlots<T>(o: SlotsOptions<T>): Slots<T> {
  const maxIdle = Math.max(0, o.maxIdle);
  const byKey = new Map<string, T[]>();
  /** Every idle item in the order it was parked (oldest first), with its key and its timer. */
  const parked = new Map<T, { key: string; timer: NodeJS.Timeout }>();
  let closed = false;

  /** `item` is no longer idle; true when it was. */
  function unpark(key: string, item: T): boolean {
    const entry = parked.get(item);
    if (!entry || entry.key !== key) return false;
    clearTimeout(entry.timer);
    parked.delete(item);
    const list = byKey.get(key)!;
    list.splice(list.indexOf(item), 1);
    if (list.length === 0) byKey.delete(key);
    return true;
  }

  function drop(key: string, item: T): boolean {
    if (!unpark(key, item)) return false;
    void o.destroy(item, false);
    o.onGone?.(key);
    return true;
  }

  return {
    park(key, item, ttlMs = o.idleMs) {
      if (closed) {
        void o.destroy(item, true);
        return;
      }
      const timer = setTimeout(() => drop(key, item), Math.max(0, Math.min(ttlMs, o.idleMs)));
      timer.unref();
      parked.set(item, { key, timer });
      const list = byKey.get(key);
      if (list) list.push(item);
      else byKey.set(key, [item]);
      // Many keys each keeping a few idle sandboxes would hold the host's memory: over the cap, the one idle longest goes.
      while (parked.size > maxIdle) {
        const [oldest, { key: itsKey }] = parked.entries().next().value as [T, { key: string }];
        drop(itsKey, oldest);
      }
    },
    take(key) {
      const item = byKey.get(key)?.at(-1);
      if (item === undefined) return undefined;
      unpark(key, item);
      return item;
    },
    drop,
    evictOldest(except) {
      for (const [item, { key }] of parked) if (key !== except) return drop(key, item);
      return false;
    },
    idle: (key) => (key === undefined ? parked.size : (byKey.get(key)?.length ?? 0)),
    async close() {
      closed = true;
      const all = [...parked.keys()];
      for (const { timer } of parked.values()) clearTimeout(timer);
      parked.clear();
      byKey.clear();
      await Promise.all(all.map((item) => o.destroy(item, true)));
    },
  };
}
