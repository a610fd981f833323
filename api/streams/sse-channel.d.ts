/** Types for sse-channel 4 (it ships none): only what api/streams/sse.ts uses. */
declare module 'sse-channel' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface SseMessage {
    id?: number;
    event?: string;
    data?: unknown;
    retry?: number;
  }

  interface SseChannelOptions {
    history?: SseMessage[];
    historySize?: number;
    retryTimeout?: number;
    pingInterval?: number;
    jsonEncode?: boolean;
  }

  class SseChannel extends EventEmitter {
    constructor(options?: SseChannelOptions);
    /** The ping interval; cleared by close(). */
    timer: NodeJS.Timeout;
    addClient(req: IncomingMessage, res: ServerResponse, callback?: () => void): void;
    removeClient(res: ServerResponse): void;
    getConnectionCount(): number;
    ping(): void;
    retry(duration: number): void;
    send(msg: SseMessage | string, clients?: ServerResponse[]): void;
    sendEventsSinceId(res: ServerResponse, sinceId: number | string): void;
    close(): void;
  }

  export default SseChannel;
}
