import { seedSchema } from '../../src/seed/schema';
import { toSeedData } from '../../src/seed/file';
import type { SeedData } from '../../src/store/store';

export const ACME = { source_id: 'ACME', share_public: 'pk_test_acme_1', share_secret: 'sk_test_acme_1', destinations: ['D1', 'D2'] };
export const OTHER = { source_id: 'OTHER', share_public: 'pk_test_other_1', share_secret: 'sk_test_other_1', destinations: ['X1'] };
/** Signs its own requests (contract section 10). */
export const SIGNER_SECRET = `whsec_${Buffer.from('signer-own-signing-secret-012345').toString('base64')}`;
export const SIGNER = {
  source_id: 'SIGNER',
  share_public: 'pk_test_signer_1',
  share_secret: 'sk_test_signer_1',
  signing_secrets: [SIGNER_SECRET],
  destinations: ['S1'],
};

/** Tokens by role, so a test names what it needs rather than an id. */
export const TOKENS = {
  active: { token_id: '1000000000000001', source_id: 'ACME', destination_id: 'D1', status: 'active', balance: '1000.00' },
  small: { token_id: '1010', source_id: 'ACME', destination_id: 'D1', status: 'active', balance: '0.30' },
  freezed: { token_id: '1000000000000002', source_id: 'ACME', destination_id: 'D1', status: 'freezed', balance: '50.00' },
  disputed: { token_id: '1000000000000003', source_id: 'ACME', destination_id: 'D1', status: 'disputed', balance: '50.00' },
  deleted: { token_id: '1000000000000004', source_id: 'ACME', destination_id: 'D1', status: 'deleted', balance: '50.00' },
  atD2: { token_id: '1000000000000005', source_id: 'ACME', destination_id: 'D2', status: 'active', balance: '80.00' },
  others: { token_id: '2000000000000001', source_id: 'OTHER', destination_id: 'X1', status: 'active', balance: '70.00' },
  signers: { token_id: '3000000000000001', source_id: 'SIGNER', destination_id: 'S1', status: 'active', balance: '40.00' },
  /** FIXED_NOW is 02-01-2026: usable from 01-01-2026 to 02-01-2026, both days included. */
  dated: {
    token_id: '1000000000000006',
    source_id: 'ACME',
    destination_id: 'D1',
    status: 'active',
    balance: '60.00',
    available_date: '01-01-2026',
    expiry_date: '02-01-2026',
  },
  expired: {
    token_id: '1000000000000007',
    source_id: 'ACME',
    destination_id: 'D1',
    status: 'active',
    balance: '60.00',
    expiry_date: '01-01-2026',
  },
  notYetAvailable: {
    token_id: '1000000000000008',
    source_id: 'ACME',
    destination_id: 'D1',
    status: 'active',
    balance: '60.00',
    available_date: '03-01-2026',
  },
} as const;

export const BOOKING = {
  booking_id: '1396',
  source_id: 'ACME',
  buyer_id: '',
  booking_date: '21-01-2024',
  booking_category: 'hotel',
  supplier_id: 'SUP-1',
  property_name: 'Hotel Aurora',
  property_country: 'NL',
  guests_count: '2',
  room_count: '1',
  check_in: '14-02-2024',
  check_out: '17-02-2024',
  transaction_currency: 'EUR',
  transaction_amount: '450.00',
  margin_category: '%',
  transaction_margin: '12.50',
  nonrefundable_amount: '150.00',
  refundable_amount: '300.00',
  firstnight_amount: '150.00',
  cancellation_days: '7',
  auth_code: 'AUTH-1',
  pre_auth: 'true',
  updated_at: '2024-01-21T09:30:00.000Z',
};

export const OTHERS_BOOKING = { ...BOOKING, booking_id: '77', source_id: 'OTHER' };

export const FIXTURE = {
  accounts: [ACME, OTHER, SIGNER],
  tokens: Object.values(TOKENS),
  bookings: [BOOKING, OTHERS_BOOKING],
};

export function fixtureSeed(): SeedData {
  return toSeedData(seedSchema.parse(FIXTURE), new Date('2024-01-01T00:00:00.000Z'));
}
