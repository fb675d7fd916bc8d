import { types, type Connection, type Pool, type PoolClient, type Submittable } from 'pg';
import { isReadTimeout } from './errors';
import { statement, type Call } from './statements';

/** One statement's answer: its command tag and the rows it returned. */
export interface StatementResult {
  command: string;
  rows: Array<Record<string, unknown>>;
}

type Parser = [name: string, parse: (text: string) => unknown];

/**
 * As node-postgres sends values in text form: times as ISO 8601, numbers and strings as text, null as NULL, arrays
 * as array literals; a Buffer in binary form, as a batch's arrays go (array-parameters.ts).
 */
function toParameter(value: unknown): string | Buffer | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return `{${value.map(arrayElement).join(',')}}`;
  return String(value);
}

/** One element of an array literal (delivery's positions send them; a batch's arrays go in binary form): quoted, its quotes and backslashes escaped. */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // A number needs no quotes; most text needs no escapes, and a replace that finds none still costs its scan.
  if (typeof value === 'number') return String(value);
  const text = value instanceof Date ? value.toISOString() : String(value);
  return text.includes('"') || text.includes('\\') ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
}

/**
 * The statements each connection has parsed, name to text, so each is parsed once per connection; a name is
 * refused for another text, as node-postgres refuses it (its prepared statement would run the first text).
 */
const parsedOn = new WeakMap<Connection, Map<string, string>>();

/** A call as it is written to the connection: every value already converted, and whether its statement is parsed first. */
interface PreparedCall {
  parse: boolean;
  name: string;
  text: string;
  values: Array<string | Buffer | null>;
  describe: boolean;
}

/**
 * Connections behind a transaction-mode pooler (contract section 12), with what each transaction must set: the
 * pooler hands every transaction whichever server connection is free, so nothing may rely on the session. Their
 * statements are parsed unnamed in every round trip (a named one may not exist on the next transaction's server
 * connection, or may exist there already), and settings go with each BEGIN (set_config(..., true)), not in the
 * start-up parameters, which a pooler refuses.
 */
const sessionless = new WeakMap<Connection, Call[]>();

const SET_STATEMENT_TIMEOUT = statement('set_statement_timeout', "SELECT set_config('statement_timeout', $1, true)", 'SELECT');

/** The pool's connections keep no session state; each transaction sets statementTimeoutMs for itself. */
export function withoutSessionState(pool: Pool, statementTimeoutMs: number): void {
  const settings: Call[] = [{ statement: SET_STATEMENT_TIMEOUT, values: [`${statementTimeoutMs}ms`] }];
  pool.on('connect', (client) => sessionless.set((client as PoolClient & { connection: Connection }).connection, settings));
}

/** What a transaction on this connection sets after BEGIN: nothing, unless the pool keeps no session state. */
export function transactionSettings(client: PoolClient): readonly Call[] {
  return sessionless.get((client as PoolClient & { connection: Connection }).connection) ?? [];
}

/**
 * Several statements in one round trip, each its own Parse (once per
 * connection) / Bind (the values) / Describe / Execute on the extended
 * protocol, and a single Sync after the last: the database answers them all
 * in one flush, which a client in node-postgres's `pipeline` mode cannot do
 * (it ends every statement with a Sync, so the database answers and flushes
 * each on its own, which cost more CPU than the literal batches it replaced:
 * docs/BENCHMARKS.md, item 10).
 * On an error PostgreSQL skips the rest up to the Sync, so the first failure
 * is the answer. A Submittable, as node-postgres's own cursors are.
 */
class RoundTrip implements Submittable {
  callback: (error: Error | null, results?: StatementResult[]) => void;
  /**
   * What the round trip runs, by statement name (never values): node-postgres ignores it for a Submittable, but
   * OpenTelemetry's pg instrumentation reads it, and then ends the round trip's span when callback is called.
   */
  readonly text: string;
  private readonly results: StatementResult[] = [];
  private parsers: Parser[] = [];
  private rows: Array<Record<string, unknown>> = [];
  /** Statements whose Parse was sent in this round trip, in order, until PostgreSQL confirms each. */
  private readonly parsing: Array<[name: string, text: string]> = [];
  private parsed = new Map<string, string>();
  private connection: Connection | undefined;
  private done = false;

  constructor(
    private readonly calls: readonly Call[],
    callback: (error: Error | null, results?: StatementResult[]) => void,
  ) {
    this.callback = callback;
    this.text = calls.map(({ statement }) => statement.name).join('; ');
  }

  private readonly onParseComplete = () => {
    const parsed = this.parsing.shift();
    if (parsed !== undefined) this.parsed.set(...parsed);
  };

  /**
   * Every call as it will be written, checked and converted before the first byte is: a value that cannot be
   * converted, or a name parsed for another text, then fails the round trip with nothing sent, rather than leave
   * statements on the connection without their Sync (the connection would wait for ever).
   */
  private prepare(unnamed: boolean): PreparedCall[] {
    const parsingNow = new Map<string, string>();
    return this.calls.map(({ statement, values = [] }) => {
      if (statement.with !== undefined) throw new Error(`statement ${statement.name} reads WITH parts: it goes in checkedWrites`);
      const converted = values.map(toParameter);
      const describe = statement.tag === 'SELECT';
      // The unnamed statement lasts until the next Parse: each is parsed right before its Bind.
      if (unnamed) return { parse: true, name: '', text: statement.text, values: converted, describe };
      const known = this.parsed.get(statement.name) ?? parsingNow.get(statement.name);
      if (known !== undefined && known !== statement.text) {
        throw new Error(`statement ${statement.name} was parsed on this connection as another text`);
      }
      if (known === undefined) parsingNow.set(statement.name, statement.text);
      return { parse: known === undefined, name: statement.name, text: statement.text, values: converted, describe };
    });
  }

  /** Writes the round trip; an error returned instead (nothing written) is handed to handleError by the driver. */
  submit(connection: Connection): Error | undefined {
    this.connection = connection;
    const unnamed = sessionless.has(connection);
    let parsed = parsedOn.get(connection);
    if (!parsed) parsedOn.set(connection, (parsed = new Map()));
    this.parsed = parsed;
    let prepared: PreparedCall[];
    try {
      prepared = this.prepare(unnamed);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    connection.on('parseComplete', this.onParseComplete);
    // Each message is a write of its own; corked, they leave in one (one system call).
    connection.stream.cork();
    try {
      for (const { parse, name, text, values, describe } of prepared) {
        if (parse) {
          connection.parse({ name, text, types: [] }, true);
          if (!unnamed) this.parsing.push([name, text]);
        }
        connection.bind({ statement: name, values } as never, true);
        // Only a statement that returns rows is described: the description names and types its columns, and is a
        // message each way for nothing on a write (a part of the receiver's CPU per batch, docs/BENCHMARKS.md).
        if (describe) connection.describe({ type: 'P' }, true);
        connection.execute({}, true);
      }
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return undefined;
  }

  handleRowDescription(message: { fields: Array<{ name: string; dataTypeID: number }> }): void {
    this.parsers = message.fields.map((field) => [field.name, types.getTypeParser(field.dataTypeID, 'text')]);
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.parsers.length !== message.fields.length) {
      this.finish(new Error('a statement not described as a SELECT returned rows'));
      return;
    }
    const row: Record<string, unknown> = {};
    message.fields.forEach((text, i) => {
      const [name, parse] = this.parsers[i];
      row[name] = text === null ? null : parse(text);
    });
    this.rows.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    // "INSERT 0 1", "UPDATE 1", "COMMIT": the tag is the first word.
    this.results.push({ command: message.text.split(' ')[0], rows: this.rows });
    this.parsers = [];
    this.rows = [];
  }

  /** Part of the protocol the client drives; no statement of a round trip is empty. */
  handleEmptyQuery(): void {}

  handleError(error: Error): void {
    this.finish(error);
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }

  handlePortalSuspended(): void {
    this.finish(new Error('a statement of a round trip returned its rows in parts'));
  }

  handleCopyInResponse(): void {
    this.finish(new Error('a statement of a round trip started COPY'));
  }

  /** Part of the protocol the client drives; COPY has already failed the round trip (handleCopyInResponse). */
  handleCopyData(): void {}

  private finish(error: Error | null): void {
    if (this.done) return;
    this.done = true;
    this.connection?.off('parseComplete', this.onParseComplete);
    if (error) this.callback(error);
    else this.callback(null, this.results);
  }
}

/**
 * Sends the calls in one round trip and checks every answer's command tag:
 * a COMMIT inside a transaction that failed answers ROLLBACK without an
 * error, and nothing else would notice that the unit was not applied.
 */
export async function roundTrip(client: PoolClient, calls: readonly Call[]): Promise<StatementResult[]> {
  // Behind a pooler, each BEGIN carries the transaction's settings; their answers are not the caller's.
  const settings = transactionSettings(client);
  const sent = settings.length === 0 ? calls : calls.flatMap((call) => (call.statement.tag === 'BEGIN' ? [call, ...settings] : [call]));
  const results = await new Promise<StatementResult[]>((resolve, reject) => {
    client.query(new RoundTrip(sent, (error, answers) => (error ? reject(error) : resolve(answers as StatementResult[]))));
  });
  const checked = results.map((result, index) => {
    const { name, tag } = sent[index].statement;
    if (result.command !== tag) throw new Error(`${name} answered ${result.command} instead of ${tag}`);
    return result;
  });
  return sent === calls ? checked : checked.filter((_, index) => !settings.includes(sent[index]));
}

/**
 * Runs work on a pooled connection. While a connection is checked out the pool does not listen to its
 * `error` event, and an unhandled one ends the process: it is handled here, and a connection that failed
 * is discarded. When the work throws, `recover` must make the connection fit for reuse (ROLLBACK, say);
 * if it cannot, the connection is discarded too.
 */
export async function withClient<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
  recover: (client: PoolClient) => Promise<unknown>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } catch (error) {
    // The driver gave up on an answer that may still come: the connection cannot be trusted with another statement.
    if (isReadTimeout(error)) broken = true;
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

/** BEGIN, the work on the client, COMMIT; ROLLBACK when the work throws. For what is not a unit of work: migrations, the seed. */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(
    pool,
    async (client) => {
      await client.query('BEGIN');
      for (const { statement: setting, values } of transactionSettings(client)) await client.query(setting.text, values);
      const result = await work(client);
      const commit = await client.query('COMMIT');
      if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
      return result;
    },
    (client) => client.query('ROLLBACK'),
  );
}
