/**
 * The one keyed cache of idle sandbox slots (sandbox/slots.ts) that reuse mode's bound sandboxes and warm MCP servers
 * both keep: which idle item a key's next call gets, expiry, the cap over all keys and its eviction, and close. No
 * sandbox: the items are plain objects, so each test takes milliseconds.
 */
import test from 'ava';
import { createSlots } from '../sandbox/slots.js';
import { waitFor } from './helpers/wait.js';

type Item = { name: string };

function slotsOf(o: { idleMs?: number; maxIdle?: number } = {}) {
  const destroyed: string[] = [];
  const gone: string[] = [];
  const closing: boolean[] = [];
  const slots = createSlots<Item>({
    idleMs: o.idleMs ?? 60_000,
    maxIdle: o.maxIdle ?? 8,
    destroy: (item, isClosing) => {
      destroyed.push(item.name);
      closing.push(isClosing);
    },
    onGone: (key) => gone.push(key),
  });
  return { slots, destroyed, gone, closing };
}

test('a key gets its own idle item, the one idle most recently, and never another key’s', (t) => {
  const { slots, destroyed } = slotsOf();
  slots.park('alice', { name: 'a1' });
  slots.park('alice', { name: 'a2' });
  slots.park('bob', { name: 'b1' });
  t.is(slots.take('carol'), undefined);
  t.is(slots.take('alice')?.name, 'a2');
  t.is(slots.take('alice')?.name, 'a1');
  t.is(slots.take('alice'), undefined);
  t.is(slots.idle('bob'), 1);
  t.is(slots.idle(), 1);
  t.deepEqual(destroyed, [], 'taking an item does not destroy it');
});

test('an item nobody takes within its idle time is destroyed and its key told; one taken in time is not', async (t) => {
  const { slots, destroyed, gone } = slotsOf({ idleMs: 30 });
  slots.park('alice', { name: 'kept' });
  const kept = slots.take('alice');
  slots.park('bob', { name: 'expires' });
  // A shorter time of its own (reuse mode: what is left of a sandbox's age limit) applies too.
  slots.park('carol', { name: 'aged' }, 0);
  await waitFor(() => destroyed.length === 2, 'both idle items to expire');
  t.deepEqual(destroyed.sort(), ['aged', 'expires']);
  t.deepEqual(gone.sort(), ['bob', 'carol']);
  t.is(kept?.name, 'kept');
  t.is(slots.idle(), 0);
});

test('over the cap of idle items over all keys, the one idle longest goes, whatever its key', (t) => {
  const { slots, destroyed, gone } = slotsOf({ maxIdle: 2 });
  slots.park('alice', { name: 'a1' });
  slots.park('bob', { name: 'b1' });
  slots.park('alice', { name: 'a2' });
  t.deepEqual(destroyed, ['a1']);
  t.deepEqual(gone, ['alice']);
  t.is(slots.idle('alice'), 1);
  t.is(slots.idle('bob'), 1);
  // A cap of 0 keeps nothing idle (warming off).
  const none = slotsOf({ maxIdle: 0 });
  none.slots.park('alice', { name: 'x' });
  t.deepEqual(none.destroyed, ['x']);
});

test('making room for a key evicts the item idle longest of another key; dropping destroys only an idle item', (t) => {
  const { slots, destroyed } = slotsOf();
  slots.park('alice', { name: 'a1' });
  slots.park('bob', { name: 'b1' });
  slots.park('bob', { name: 'b2' });
  t.true(slots.evictOldest('alice'));
  t.deepEqual(destroyed, ['b1']);
  t.true(slots.evictOldest('bob'));
  t.false(slots.evictOldest('bob'), 'only bob’s own item is left');
  t.deepEqual(destroyed, ['b1', 'a1']);
  const b2 = slots.take('bob')!;
  t.false(slots.drop('bob', b2), 'a taken item is the caller’s: dropping it does nothing');
  slots.park('bob', b2);
  t.false(slots.drop('alice', b2), 'an item is dropped only under its own key');
  t.true(slots.drop('bob', b2));
  t.deepEqual(destroyed, ['b1', 'a1', 'b2']);
});

test('close destroys every idle item as closing, and an item parked afterwards too', async (t) => {
  const { slots, destroyed, closing } = slotsOf();
  slots.park('alice', { name: 'a1' });
  slots.park('bob', { name: 'b1' });
  await slots.close();
  t.deepEqual(destroyed.sort(), ['a1', 'b1']);
  slots.park('alice', { name: 'late' });
  t.is(slots.idle(), 0);
  t.deepEqual(destroyed.at(-1), 'late');
  t.deepEqual(closing, [true, true, true]);
});
