import { ACME, BOOKING, TOKENS } from './fixtures';

type Overrides = Record<string, unknown>;

/** Drops the fields given as undefined, so a test can remove one by name. */
function withOverrides(base: Overrides, overrides: Overrides): Overrides {
  const merged: Overrides = { ...base, ...overrides };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return merged;
}

let transactionCounter = 0;

/** A fresh 20-digit transaction id per call. */
export function newTransactionId(): string {
  transactionCounter += 1;
  return `9${String(Date.now()).padStart(13, '0')}${String(transactionCounter).padStart(6, '0')}`.slice(0, 20);
}

/** A valid withdrawal of 100.00 from the 1000.00 active token. */
export function withdrawal(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_public: ACME.share_public,
      read_event: 'token.withdrawn_created',
      source_id: ACME.source_id,
      destination_id: TOKENS.active.destination_id,
      token_id: TOKENS.active.token_id,
      transaction_id: newTransactionId(),
      withdrawn_amount: '100.00',
      token_balance: '900.00',
    },
    overrides,
  );
}

/** A valid status change of the active token to freezed. */
export function statusChange(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_public: ACME.share_public,
      read_event: 'token.status_changed',
      source_id: ACME.source_id,
      destination_id: TOKENS.active.destination_id,
      token_id: Number(TOKENS.active.token_id),
      tokes_status: 'freezed',
    },
    overrides,
  );
}

/** A valid change of the guest count of the fixture booking. */
export function bookingChange(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_secret: ACME.share_secret,
      booking_event: 'modify',
      source_id: ACME.source_id,
      booking_id: BOOKING.booking_id,
      guests_count: '3',
    },
    overrides,
  );
}

export function bookingPath(key = 'key-00000001', partnerId = ACME.source_id, version = 'v1'): string {
  return `/${version}/booking/${partnerId}/${key}`;
}
