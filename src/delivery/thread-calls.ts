/**
 * Calls between the serving thread and the delivery thread (delivery-thread.ts), each way over one channel: a call is
 * a message with an id, answered by one with the same id, carrying its value or its error's message; an event is
 * told and not answered. Values cross by structured clone (Dates and Maps included).
 */

/** A Worker, or the worker's parentPort: both post messages and emit what arrives. */
export interface ThreadPort {
  postMessage(value: unknown): void;
  on(event: 'message', listener: (value: unknown) => void): unknown;
}

export type ThreadMessage =
  | { kind: 'call'; id: number; method: string; args: unknown[] }
  | { kind: 'answer'; id: number; value?: unknown; error?: string }
  | { kind: 'event'; name: string; value: unknown };

/** What a side answers when called: the method by its name. */
export type CallHandlers = Record<string, (...args: never[]) => unknown>;

export class ThreadCalls {
  private lastId = 0;
  /** The other side is gone (failAll): a call made now would never be answered. */
  private closedBy: Error | undefined;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly port: ThreadPort,
    private readonly handlers: CallHandlers,
    private readonly onEvent: (name: string, value: unknown) => void,
  ) {
    port.on('message', (message) => this.receive(message as ThreadMessage));
  }

  call<T>(method: string, ...args: unknown[]): Promise<T> {
    if (this.closedBy) return Promise.reject(this.closedBy);
    const id = ++this.lastId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.port.postMessage({ kind: 'call', id, method, args } satisfies ThreadMessage);
    });
  }

  tell(name: string, value?: unknown): void {
    this.port.postMessage({ kind: 'event', name, value } satisfies ThreadMessage);
  }

  /** Every call still waiting, and every call made later, fails with `error`: the other side is gone and will never answer. */
  failAll(error: Error): void {
    this.closedBy = error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }

  private receive(message: ThreadMessage): void {
    if (message.kind === 'event') {
      this.onEvent(message.name, message.value);
    } else if (message.kind === 'answer') {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error === undefined) waiting?.resolve(message.value);
      else waiting?.reject(new Error(message.error));
    } else {
      void this.answer(message);
    }
  }

  private async answer({ id, method, args }: Extract<ThreadMessage, { kind: 'call' }>): Promise<void> {
    try {
      const handler = this.handlers[method] as ((...args: unknown[]) => unknown) | undefined;
      if (!handler) throw new Error(`no such call: ${method}`);
      // Posted in the try: a value that cannot be copied is this call's error, not an unhandled rejection.
      this.port.postMessage({ kind: 'answer', id, value: await handler(...args) } satisfies ThreadMessage);
    } catch (error) {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      this.port.postMessage({ kind: 'answer', id, error: text } satisfies ThreadMessage);
    }
  }
}
