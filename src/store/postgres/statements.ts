/** Statements as the store sends them: by name, with their values bound; and several writes as one. */
import { createHash } from 'node:crypto';

/** A statement sent by name, so PostgreSQL parses and plans it once per connection. */
export interface Statement {
  name: string;
  text: string;
  /** The command tag PostgreSQL answers when the statement succeeds. */
  tag: string;
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

/** Combined statements by the names of their parts, each made (and named) once per process. */
const combinedStatements = new Map<string, Statement>();
/** The longest statement name PostgreSQL keeps whole (NAMEDATALEN - 1). */
const MAX_STATEMENT_NAME = 63;

/**
 * Several writes as one statement (the first ones as data-modifying WITH parts, the last as the main statement,
 * their parameters renumbered), so a round trip carries one statement for all of a batch's writes: each statement
 * costs the database a message cycle and the driver a result. PostgreSQL runs the parts as one, with one
 * snapshot; the writes of a batch touch distinct rows (a row created and saved in one batch is one insert), so
 * none needs another's.
 */
export function combined(writes: readonly Call[]): Call {
  if (writes.length === 1) return writes[0];
  const joined = writes.map((write) => write.statement.name).join('+');
  let combinedStatement = combinedStatements.get(joined);
  if (!combinedStatement) {
    // PostgreSQL cuts a statement name past 63 bytes, and two cut alike would be one statement to it.
    const name =
      joined.length <= MAX_STATEMENT_NAME ? joined : `combined_${createHash('sha256').update(joined).digest('hex').slice(0, 32)}`;
    let offset = 0;
    const parts = writes.map(({ statement: { text }, values = [] }) => {
      const renumbered = text.replace(/\$(\d+)/g, (_match, n: string) => `$${Number(n) + offset}`);
      offset += values.length;
      return renumbered;
    });
    const last = parts.pop() as string;
    // PostgreSQL answers with the main statement's command tag.
    const text = `WITH ${parts.map((part, i) => `w${i} AS (${part})`).join(', ')} ${last}`;
    combinedStatement = { name, text, tag: writes[writes.length - 1].statement.tag };
    combinedStatements.set(joined, combinedStatement);
  }
  return { statement: combinedStatement, values: writes.flatMap((write) => write.values ?? []) };
}
