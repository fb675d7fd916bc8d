import { bigintArrayParameter } from '../../src/store/postgres/array-parameters';
import { checkedWrites, statement } from '../../src/store/postgres/statements';

describe('checkedWrites', () => {
  it("puts a write's WITH parts before it at the top level, numbered with the write's own parameters", () => {
    const plain = statement('t_plain', 'INSERT INTO a (x, y) SELECT $1, $2');
    const numbered = { ...statement('t_numbered', 'INSERT INTO b (n) SELECT n FROM numbers'), with: 'numbers AS (SELECT $1::int AS n)' };
    const call = checkedWrites([
      { statement: plain, values: [1, 2], rowsMeant: 1 },
      { statement: numbered, values: [3], rowsMeant: undefined },
    ]);
    expect(call.statement.text).toBe(
      'WITH w0 AS (INSERT INTO a (x, y) SELECT $1, $2 RETURNING 1), numbers AS (SELECT $3::int AS n), ' +
        'w1 AS (INSERT INTO b (n) SELECT n FROM numbers) ' +
        'SELECT batch_rows_written($4::bigint[], ARRAY[(SELECT count(*) FROM w0)]::bigint[]) AS checked',
    );
    expect(call.values).toEqual([1, 2, 3, bigintArrayParameter([1])]);
  });

  it('refuses two writes with WITH parts in one statement: their names would clash', () => {
    const numbered = { ...statement('t_numbered', 'INSERT INTO b (n) SELECT n FROM numbers'), with: 'numbers AS (SELECT $1::int AS n)' };
    const again = { ...numbered, name: 't_numbered_again' };
    expect(() =>
      checkedWrites([
        { statement: numbered, values: [1], rowsMeant: 1 },
        { statement: again, values: [2], rowsMeant: 1 },
      ]),
    ).toThrow('t_numbered+t_numbered_again: more than one write with WITH parts');
  });
});
