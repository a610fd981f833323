/** A stream that keeps what is written to it as text: a logger's destination that a test reads back. */
import { Writable } from 'node:stream';

export function textSink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}
