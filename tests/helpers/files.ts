/**
 * Walking a folder that other test files write into while it is read: in a full run the package cache is shared by
 * every file (tests/run.ts), and an install removes its `.staging-*` folder when it publishes. What disappears between
 * the listing and the reading was never the caller's to see, and is skipped; any other error is thrown.
 */
import fs from 'node:fs';
import path from 'node:path';

const gone = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Every regular file under `dir` (symbolic links are not followed), or none when `dir` does not exist. */
export function filesUnder(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (gone(err)) return [];
    throw err;
  }
  return entries.flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p);
    return e.isFile() ? [p] : [];
  });
}

/** A file's bytes, or undefined when it is gone. */
export function readIfThere(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if (gone(err)) return undefined;
    throw err;
  }
}
