import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection, Pool } from 'pg';
import { jsonArrayParameter } from '../../src/store/postgres/array-parameters';
import { roundTrip, withClient } from '../../src/store/postgres/connection';
import { statement } from '../../src/store/postgres/statements';
import { TEST_DATABASE_URL, warnIfNoDatabase } from '../helpers/postgres';

warnIfNoDatabase();
const ROOT = path.resolve(__dirname, '..', '..');
const pgFile = (file: string) => readFileSync(require.resolve(`pg/${file}`), 'utf8');

/**
 * src/store/postgres/connection.ts sends a round trip's messages itself, on node-postgres's Connection, and reads
 * the answers through the Submittable handlers the Client calls: internals, not public API. package.json pins pg
 * to the minor it was written against; these tests fail, saying what changed, when an upgrade moves the seam.
 */
describe('the seam with node-postgres that a batch round trip is built on', () => {
  it('pg is the minor version connection.ts was written against (8.23), and package.json pins it there', () => {
    expect(JSON.parse(pgFile('package.json')).version).toMatch(/^8\.23\./);
    expect(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies.pg).toBe('~8.23.1');
  });

  it("a Connection still sends the extended protocol's messages one by one", () => {
    for (const message of ['parse', 'bind', 'describe', 'execute', 'sync'])
      expect(`${message}: ${typeof (Connection.prototype as unknown as Record<string, unknown>)[message]}`).toBe(`${message}: function`);
  });

  it('the Client still hands every answer of a round trip to the active Submittable', () => {
    const client = pgFile('lib/client.js');
    const events = [
      'rowDescription',
      'dataRow',
      'commandComplete',
      'readyForQuery',
      'errorMessage',
      'emptyQuery',
      'portalSuspended',
      'copyInResponse',
      'copyData',
      'parseComplete',
    ];
    for (const event of events) expect(client).toContain(`con.on('${event}'`);
    for (const handler of [
      'handleRowDescription',
      'handleDataRow',
      'handleCommandComplete',
      'handleReadyForQuery',
      'handleError',
      'handleEmptyQuery',
      'handlePortalSuspended',
      'handleCopyInResponse',
      'handleCopyData',
    ]) {
      expect(client).toContain(`.${handler}(`);
    }
  });

  it('a Buffer value is still bound in binary form, as jsonArrayParameter needs, and any other value as text', () => {
    const serializer = readFileSync(require.resolve('pg-protocol/dist/serializer.js'), 'utf8');
    expect(serializer).toMatch(/mappedVal instanceof Buffer\)\s*\{\s*formatByte = 1/);
  });

  (TEST_DATABASE_URL ? it : it.skip)(
    "on a real connection: JSON texts bound as jsonArrayParameter's json[] read back as sent, byte for byte",
    async () => {
      const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
      const texts = [
        '{"a":"quote \\" and backslash \\\\","b":[1,2.5,null,true]}',
        '{"name":"日本語のホテル","emoji":"🏨","nul":"\\u0000 stays escaped"}',
        '{}',
        '"a string on its own"',
        JSON.stringify({ long: 'x'.repeat(100_000) }),
      ];
      try {
        const nothingToUndo = async () => undefined;
        const [result] = await withClient(
          pool,
          (client) =>
            roundTrip(client, [
              {
                statement: statement(
                  'seam_json_array',
                  'SELECT t::text AS text, n FROM unnest($1::json[]) WITH ORDINALITY AS u (t, n) ORDER BY n',
                ),
                values: [jsonArrayParameter(texts)],
              },
            ]),
          nothingToUndo,
        );
        expect(result.rows.map((row) => row.text)).toEqual(texts);
        await expect(
          withClient(
            pool,
            (client) =>
              roundTrip(client, [
                { statement: statement('seam_json_array_bad', 'SELECT $1::json[] AS bad'), values: [jsonArrayParameter(['{"a":'])] },
              ]),
            nothingToUndo,
          ),
        ).rejects.toThrow(/invalid input syntax for type json/);
      } finally {
        await pool.end();
      }
    },
  );

  (TEST_DATABASE_URL ? it : it.skip)(
    'on a real connection: each statement answers its tag and rows, and is parsed once per connection',
    async () => {
      const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
      const sum = statement('seam_sum', 'SELECT $1::int + $2::int AS total');
      const parses: number[] = [];
      try {
        for (let round = 0; round < 2; round += 1) {
          const results = await withClient(
            pool,
            async (client) => {
              let parsed = 0;
              const count = () => (parsed += 1);
              client.connection.on('parseComplete', count);
              try {
                return await roundTrip(client, [
                  { statement: statement('seam_begin', 'BEGIN') },
                  { statement: sum, values: [2, 3] },
                  { statement: sum, values: [4, 5] },
                  { statement: statement('seam_commit', 'COMMIT') },
                ]);
              } finally {
                client.connection.off('parseComplete', count);
                parses.push(parsed);
              }
            },
            (client) => client.query('ROLLBACK'),
          );
          expect(results.map(({ command, rows }) => [command, rows])).toEqual([
            ['BEGIN', []],
            ['SELECT', [{ total: 5 }]],
            ['SELECT', [{ total: 9 }]],
            ['COMMIT', []],
          ]);
        }
        expect(parses).toEqual([3, 0]);
      } finally {
        await pool.end();
      }
    },
  );
});
