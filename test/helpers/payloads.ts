import { ACME, BOOKING, OTHER, TOKENS } from './fixtures';

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

/** The fields every token notification starts with, naming the 1000.00 active token. */
function notification(readEvent: string): Overrides {
  return {
    share_public: ACME.share_public,
    read_event: readEvent,
    source_id: ACME.source_id,
    destination_id: TOKENS.active.destination_id,
    token_id: TOKENS.active.token_id,
  };
}

/** A valid load of 100.00 (fee 2.50) onto the 1000.00 active token. */
export function loaded(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      ...notification('token.loaded_created'),
      transaction_id: newTransactionId(),
      load_amount: '100.00',
      fee_amount: '2.50',
      token_balance: '1100.00',
    },
    overrides,
  );
}

/** A valid unload of 100.00 from the 1000.00 active token. */
export function unloaded(overrides: Overrides = {}): Overrides {
  return withOverrides(
    { ...notification('token.unloaded_created'), transaction_id: newTransactionId(), unload_amount: '100.00', token_balance: '900.00' },
    overrides,
  );
}

/** A valid credited schedule taking the 1000.00 active token to 1250.00. */
export function loadSchedule(overrides: Overrides = {}): Overrides {
  return withOverrides(
    { ...notification('token.load_schedule'), schedule_status: 'credited', transaction_id: newTransactionId(), token_balance: '1250.00' },
    overrides,
  );
}

/** A valid new expiry date for the active token. */
export function expiryDate(overrides: Overrides = {}): Overrides {
  return withOverrides({ ...notification('token.expiry_updated'), expiry_date: '31-12-2026' }, overrides);
}

/** A valid new available date for the active token. */
export function availableDate(overrides: Overrides = {}): Overrides {
  return withOverrides({ ...notification('token.available_updated'), available_date: '01-01-2026' }, overrides);
}

/** A valid Create Token of 500.00 at D1. */
export function tokenCreation(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_secret: ACME.share_secret,
      token_event: 'create',
      source_id: ACME.source_id,
      destination_id: 'D1',
      destination_currency: 'EUR',
      load_amount: '500.00',
      available_date: '01-01-2026',
      expiry_date: '31-12-2026',
    },
    overrides,
  );
}

/** A valid refund of 40.00 onto the 1000.00 active token (which needs a withdrawal of at least that first). */
export function refund(overrides: Overrides = {}): Overrides {
  return withOverrides(
    { ...notification('token.refund_available'), transaction_id: newTransactionId(), refund_amount: '40.00', token_balance: '1040.00' },
    overrides,
  );
}

/** A valid Modify Token of the 1000.00 active token: its name. */
export function tokenModification(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_secret: ACME.share_secret,
      token_event: 'modify',
      source_id: ACME.source_id,
      destination_id: TOKENS.active.destination_id,
      token_id: TOKENS.active.token_id,
      token_name: 'Guest card 7',
    },
    overrides,
  );
}

/** A valid Load Token of 100.00 onto the 1000.00 active token. */
export function tokenLoad(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_secret: ACME.share_secret,
      token_event: 'load',
      source_id: ACME.source_id,
      token_id: TOKENS.active.token_id,
      load_amount: '100.00',
    },
    overrides,
  );
}

/** A valid Unload Token of 100.00 from the 1000.00 active token. */
export function tokenUnload(overrides: Overrides = {}): Overrides {
  return withOverrides(
    {
      share_secret: ACME.share_secret,
      token_event: 'unload',
      source_id: ACME.source_id,
      token_id: TOKENS.active.token_id,
      unload_amount: '100.00',
    },
    overrides,
  );
}

/** A valid Create Booking of a booking ACME does not have: the fixture booking's fields under another id. */
export function bookingCreation(overrides: Overrides = {}): Overrides {
  const { updated_at: _updatedAt, ...fields } = BOOKING;
  return withOverrides({ ...fields, share_secret: ACME.share_secret, booking_event: 'new', booking_id: 'B-2001' }, overrides);
}

/** A valid Cancel Booking of the fixture booking. */
export function bookingCancellation(overrides: Overrides = {}): Overrides {
  return withOverrides(
    { share_secret: ACME.share_secret, booking_event: 'cancel', source_id: ACME.source_id, booking_id: BOOKING.booking_id },
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

/** statusChange of the other account's token: a request of an account that did nothing wrong, beside one that did. */
export function otherAccountStatusChange(overrides: Overrides = {}): Overrides {
  return statusChange({
    share_public: OTHER.share_public,
    source_id: OTHER.source_id,
    destination_id: TOKENS.others.destination_id,
    token_id: Number(TOKENS.others.token_id),
    ...overrides,
  });
}

/**
 * Status changes that toggle each fixture token between freezed and active: one change recorded per request, as many
 * as a test needs, for tokens of either account. Each call of `statusToggles` starts from the seed's statuses.
 */
export function statusToggles(): (token: { token_id: string; destination_id: string; source_id: string }) => Overrides {
  const frozen = new Set<string>();
  return (token) => {
    const freeze = !frozen.delete(token.token_id);
    if (freeze) frozen.add(token.token_id);
    const account = token.source_id === OTHER.source_id ? otherAccountStatusChange : statusChange;
    return account({ token_id: Number(token.token_id), destination_id: token.destination_id, tokes_status: freeze ? 'freezed' : 'active' });
  };
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

export function tokenPath(key = 'key-00000001', partnerId = ACME.source_id, version = 'v1'): string {
  return `/${version}/token/${partnerId}/${key}`;
}
