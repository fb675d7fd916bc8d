import { statement } from './connection';
import { LEDGER_COLUMNS, TOKEN_COLUMNS } from './rows';

/** The statements of units of work, by name: each connection parses and plans them once. */
export const UNIT = {
  begin: statement('begin', 'BEGIN'),
  commit: statement('commit', 'COMMIT'),
  // Within the caller's account: another account's token is never locked (a row that fails the condition is not).
  lockToken: statement('lock_token', `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE token_id = $1 AND source_id = $2 FOR UPDATE`),
  tokenIdTaken: statement('token_id_taken', 'SELECT EXISTS (SELECT 1 FROM tokens WHERE token_id = $1) AS taken'),
  // migrations/011: the account's counts, locked until the unit ends (a seeded account always has its row).
  lockHoldings: statement('lock_holdings', 'SELECT tokens, bookings, keys FROM account_holdings WHERE source_id = $1 FOR UPDATE'),
  countToken: statement('count_token', 'UPDATE account_holdings SET tokens = tokens + 1 WHERE source_id = $1'),
  countBooking: statement('count_booking', 'UPDATE account_holdings SET bookings = bookings + 1 WHERE source_id = $1'),
  // migrations/012: request keys and deliveries kept, counted in the unit that records one.
  countKey: statement('count_key', 'UPDATE account_holdings SET keys = keys + 1 WHERE source_id = $1'),
  // migrations/007: the lock, then the lookup, in one statement.
  lockTokenAndFindLedgerEntry: statement('lock_token_and_find_ledger_entry', 'SELECT * FROM lock_token_and_find_ledger_entry($1, $2, $3)'),
  createToken: statement(
    'create_token',
    `INSERT INTO tokens (token_id, source_id, destination_id, status, balance, available_date, expiry_date, destination_currency, details)
     VALUES ($1, $2, $3, $4, $5, DATE '1970-01-01' + $6::integer, DATE '1970-01-01' + $7::integer, $8, $9)`,
  ),
  saveToken: statement(
    'save_token',
    `UPDATE tokens SET status = $2, balance = $3, available_date = DATE '1970-01-01' + $4::integer, expiry_date = DATE '1970-01-01' + $5::integer,
       refundable = $6, details = $7
     WHERE token_id = $1`,
  ),
  recordLedgerEntry: statement(
    'record_ledger_entry',
    `INSERT INTO ledger (${LEDGER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  ),
  lockBooking: statement('lock_booking', 'SELECT source_id, booking_id, fields, status, updated_at FROM bookings WHERE source_id = $1 AND booking_id = $2 FOR UPDATE'),
  createBooking: statement('create_booking', 'INSERT INTO bookings (source_id, booking_id, fields, status, updated_at) VALUES ($1, $2, $3, $4, $5)'),
  saveBooking: statement('save_booking', 'UPDATE bookings SET fields = $3, status = $4, updated_at = $5 WHERE source_id = $1 AND booking_id = $2'),
  findKeyedRequest: statement('find_keyed_request', 'SELECT fingerprint, response, created_at FROM keyed_requests WHERE source_id = $1 AND key = $2'),
  recordKeyedRequest: statement(
    'record_keyed_request',
    'INSERT INTO keyed_requests (source_id, key, fingerprint, response, created_at) VALUES ($1, $2, $3, $4, $5)',
  ),
  findDelivery: statement('find_delivery', 'SELECT body_digest, response, received_at FROM deliveries WHERE source_id = $1 AND webhook_id = $2'),
  recordDelivery: statement(
    'record_delivery',
    'INSERT INTO deliveries (source_id, webhook_id, body_digest, response, received_at) VALUES ($1, $2, $3, $4, $5)',
  ),
};
