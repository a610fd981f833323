/**
 * Waiting for conditions, never for time: the polls every test shares. A bound only ends a test that would otherwise
 * hang; it never measures speed, so it is generous (the CI machine is a loaded 2-core box, where a sandboxed run that
 * takes a second here can take a minute). A test that needs a speed measures it in bench/, not here.
 */

/** The default bound of a wait. */
export const WAIT_MS = 180_000;

export interface WaitOptions {
  /** Give up (throw, or for `settle` return the last value) after this long. */
  ms?: number;
  /** Between two reads. */
  everyMs?: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until it returns a value (not undefined, null or false) and returns it; throws naming `what` after the bound. */
export async function waitFor<T>(
  read: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  opts: WaitOptions = {},
): Promise<T> {
  const { ms = WAIT_MS, everyMs = 100 } = opts;
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}`);
    await pause(everyMs);
  }
}

/** Polls `read` until `done` holds for what it read, and returns that value; throws naming `what` after the bound. */
export async function waitUntil<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, opts: WaitOptions = {}): Promise<T> {
  const { ms = WAIT_MS, everyMs = 100 } = opts;
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}`);
    await pause(everyMs);
  }
}

/**
 * Polls `read` until `done` holds or the bound passes, and returns the last value read: for a test that asserts on the
 * value itself, so that a failure shows what was there instead of a timeout.
 */
export async function settle<T>(read: () => Promise<T> | T, done: (value: T) => boolean, opts: WaitOptions = {}): Promise<T> {
  const { ms = WAIT_MS, everyMs = 100 } = opts;
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await pause(everyMs);
  }
}
