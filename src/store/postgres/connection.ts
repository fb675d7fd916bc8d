import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';

/** A statement sent by name, so PostgreSQL parses and plans it once per connection. */
export interface Statement {
  name: string;
  text: string;
  /** The command tag PostgreSQL answers when the statement succeeds. */
  tag: string;
}

export function statement(name: string, text: string): Statement {
  return { name, text, tag: (/^\s*(\w+)/.exec(text) as RegExpExecArray)[1].toUpperCase() };
}

/** A statement with its values, which travel as bound parameters, never inside the SQL text. */
export interface Call {
  statement: Statement;
  values?: unknown[];
}

/**
 * Sends the calls on a pipelining connection in one socket write and waits for every answer. Each call is
 * its own protocol message with its own Sync, so a failed one does not stop those behind it from being
 * answered: inside a transaction they fail as "aborted", and COMMIT answers ROLLBACK without an error.
 * Hence the check of every answer's command tag. The first failure in the order sent is thrown, as it is
 * the cause of the ones after it.
 */
export async function pipeline(client: PoolClient, calls: readonly Call[]): Promise<QueryResult[]> {
  const stream = client.connection.stream;
  // The driver writes each query as it is given; corked, they leave in one write (one system call).
  stream.cork();
  let pending: Array<Promise<QueryResult>>;
  try {
    pending = calls.map(({ statement: { name, text }, values }) => client.query<QueryResultRow>({ name, text, values }));
  } finally {
    stream.uncork();
  }
  const settled = await Promise.allSettled(pending);
  return settled.map((outcome, index) => {
    if (outcome.status === 'rejected') throw outcome.reason;
    const { name, tag } = calls[index].statement;
    if (outcome.value.command !== tag) throw new Error(`${name} answered ${outcome.value.command} instead of ${tag}`);
    return outcome.value;
  });
}

/**
 * Runs work on a pooled connection. While a connection is checked out the pool does not listen to its
 * `error` event, and an unhandled one ends the process: it is handled here, and a connection that failed
 * is discarded. When the work throws, `recover` must make the connection fit for reuse (ROLLBACK, say);
 * if it cannot, the connection is discarded too.
 */
export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>, recover: (client: PoolClient) => Promise<unknown>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } catch (error) {
    if (!broken) {
      await recover(client).catch(() => {
        broken = true;
      });
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
