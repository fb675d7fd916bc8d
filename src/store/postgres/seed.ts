import type { PoolClient } from 'pg';
import type { SeedData } from '../store';
import { columnsOf, insert } from './table-statements';
import { BOOKINGS, TOKENS } from './tables';

const SEED_BATCH = 10_000;
/** The seed's tokens and bookings; rows that exist (an operation may have changed them since) are left as they are. */
const SEED_TOKENS = insert('seed_tokens', TOKENS, true);
const SEED_BOOKINGS = insert('seed_bookings', BOOKINGS, true);

/** The seed's statements, in this order, in the caller's transaction; operations' rows are left as they are. */
export async function writeSeed(client: PoolClient, seed: SeedData): Promise<void> {
  await setAccounts(client, seed);
  await insertDestinations(client, seed);
  await insertTokens(client, seed);
  await insertBookings(client, seed);
  await countHoldings(client, seed);
}

/**
 * The file is authoritative for its accounts: keys, signing secrets and destinations are set from it, and
 * an account it no longer lists is disabled, its rows kept.
 */
async function setAccounts(client: PoolClient, seed: SeedData): Promise<void> {
  await client.query('UPDATE accounts SET enabled = false WHERE enabled AND source_id <> ALL($1::text[])', [
    seed.accounts.map((a) => a.sourceId),
  ]);
  for (const accounts of batches(seed.accounts)) {
    await client.query(
      `INSERT INTO accounts (source_id, public_key_hash, secret_key_hash, signing_secrets)
       SELECT source_id, public_key_hash, secret_key_hash, ARRAY(SELECT jsonb_array_elements_text(secrets))
         FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::jsonb[]) AS seed (source_id, public_key_hash, secret_key_hash, secrets)
       ON CONFLICT (source_id) DO UPDATE
         SET public_key_hash = EXCLUDED.public_key_hash, secret_key_hash = EXCLUDED.secret_key_hash, signing_secrets = EXCLUDED.signing_secrets,
             enabled = true`,
      [
        accounts.map((a) => a.sourceId),
        accounts.map((a) => a.publicKeyHash),
        accounts.map((a) => a.secretKeyHash),
        accounts.map((a) => JSON.stringify(a.signingSecrets)),
      ],
    );
    await client.query('DELETE FROM destinations WHERE source_id = ANY($1::text[])', [accounts.map((a) => a.sourceId)]);
  }
}

async function insertDestinations(client: PoolClient, seed: SeedData): Promise<void> {
  const destinations = seed.accounts.flatMap((a) => [...a.destinations].map((destinationId) => [a.sourceId, destinationId]));
  for (const batch of batches(destinations)) {
    await client.query(
      'INSERT INTO destinations (source_id, destination_id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING',
      [batch.map((d) => d[0]), batch.map((d) => d[1])],
    );
  }
}

async function insertTokens(client: PoolClient, seed: SeedData): Promise<void> {
  for (const tokens of batches(seed.tokens)) await client.query(SEED_TOKENS.text, columnsOf(tokens.map(TOKENS.values)));
}

async function insertBookings(client: PoolClient, seed: SeedData): Promise<void> {
  for (const bookings of batches(seed.bookings)) await client.query(SEED_BOOKINGS.text, columnsOf(bookings.map(BOOKINGS.values)));
}

/**
 * Seeded tokens and bookings count toward the quotas: the seed's accounts are counted again. Each account's row
 * is locked before it is counted, in a statement of its own: another instance's batch that creates a token adds
 * to the row under its lock, so the count, taken once the lock is held, sees every such batch that committed,
 * and one still to commit adds to the count after it. Counted in the statement that takes the lock, the count
 * would be of the moment before the wait, and the recount would overwrite a token committed meanwhile.
 */
async function countHoldings(client: PoolClient, seed: SeedData): Promise<void> {
  for (const accounts of batches(seed.accounts)) {
    const sourceIds = accounts.map((a) => a.sourceId);
    await client.query('INSERT INTO account_holdings (source_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING', [sourceIds]);
    await client.query(
      'SELECT source_id FROM account_holdings WHERE source_id = ANY($1::text[]) ORDER BY source_id COLLATE "C" FOR UPDATE',
      [sourceIds],
    );
    await client.query(
      `UPDATE account_holdings h
          SET tokens = (SELECT count(*) FROM tokens t WHERE t.source_id = h.source_id),
              bookings = (SELECT count(*) FROM bookings b WHERE b.source_id = h.source_id)
        WHERE h.source_id = ANY($1::text[])`,
      [sourceIds],
    );
  }
}

/** The items SEED_BATCH at a time, each batch made when it is reached: a seed's tokens may be made one by one. */
function* batches<Item>(items: Iterable<Item>): Generator<Item[]> {
  let batch: Item[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === SEED_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
