/** Statements as the store sends them: by name, with their values bound; and several writes as one, their row counts checked. */
import { createHash } from 'node:crypto';
import { bigintArrayParameter } from './array-parameters';

/** A statement sent by name, so PostgreSQL parses and plans it once per connection. */
export interface Statement {
  name: string;
  text: string;
  /** The command tag PostgreSQL answers when the statement succeeds. */
  tag: string;
  /**
   * WITH parts the text reads from, written before it (`name AS (...), ...`; its parameters are the text's): a
   * data-modifying part must be at a statement's top level, so checkedWrites puts these beside its own parts.
   */
  with?: string;
}

/** The tag is the statement's first word, unless given: a statement led by WITH answers with its main command's. */
export function statement(name: string, text: string, tag = (/^\s*(\w+)/.exec(text) as RegExpExecArray)[1].toUpperCase()): Statement {
  return { name, text, tag };
}

/** A statement with its values, which travel as bound parameters, never inside the SQL text. */
export interface Call {
  statement: Statement;
  values?: unknown[];
}

export const BEGIN = statement('begin', 'BEGIN');
export const COMMIT = statement('commit', 'COMMIT');

/** Checked statements by the names of their parts, each made (and named) once per process. */
const checkedStatements = new Map<string, Statement>();
/** The longest statement name PostgreSQL keeps whole (NAMEDATALEN - 1). */
const MAX_STATEMENT_NAME = 63;

/** A write, and the rows it must write when its row count is checked. */
export interface WriteCall extends Call {
  rowsMeant: number | undefined;
}

/**
 * Several writes as one statement that checks the row counts of those that say how many rows they mean: each
 * write a data-modifying WITH part (parameters renumbered), a checked one returning a row per row written, and the
 * main statement has batch_rows_written (migration 016) compare the counts with the rows meant, raising an error,
 * which fails the transaction before its COMMIT, when they differ. One statement for all of a batch's writes: each
 * statement costs the database a message cycle and the driver a result. PostgreSQL runs the parts as one, with one
 * snapshot; the writes of a batch touch distinct rows (a row created and saved in one batch is one insert), so
 * none needs another's.
 */
export function checkedWrites(writes: readonly WriteCall[]): Call {
  const joined = writes.map((write) => write.statement.name).join('+');
  // The parts' names are their statement's own (change_numbers, say): one statement carrying them per batch.
  if (writes.filter((write) => write.statement.with !== undefined).length > 1)
    throw new Error(`${joined}: more than one write with WITH parts`);
  let checkedStatement = checkedStatements.get(joined);
  if (!checkedStatement) {
    // PostgreSQL cuts a statement name past 63 bytes, and two cut alike would be one statement to it.
    const name = joined.length <= MAX_STATEMENT_NAME ? joined : `checked_${createHash('sha256').update(joined).digest('hex').slice(0, 32)}`;
    let offset = 0;
    const parts = writes.flatMap(({ statement: { text, with: before }, values = [], rowsMeant }, i) => {
      const renumbered = (sql: string) => sql.replace(/\$(\d+)/g, (_match, n: string) => `$${Number(n) + offset}`);
      const own = [
        ...(before === undefined ? [] : [renumbered(before)]),
        `w${i} AS (${renumbered(text)}${rowsMeant === undefined ? '' : ' RETURNING 1'})`,
      ];
      offset += values.length;
      return own;
    });
    const written = writes.flatMap(({ rowsMeant }, i) => (rowsMeant === undefined ? [] : [`(SELECT count(*) FROM w${i})`]));
    const text = `WITH ${parts.join(', ')} SELECT batch_rows_written($${offset + 1}::bigint[], ARRAY[${written.join(', ')}]::bigint[]) AS checked`;
    checkedStatement = { name, text, tag: 'SELECT' };
    checkedStatements.set(joined, checkedStatement);
  }
  const meant = writes.flatMap(({ rowsMeant }) => (rowsMeant === undefined ? [] : [rowsMeant]));
  return { statement: checkedStatement, values: [...writes.flatMap((write) => write.values ?? []), bigintArrayParameter(meant)] };
}
