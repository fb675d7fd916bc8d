/**
 * What the OpenAPI examples share: the demo seed's keys (seed/demo.json, account PDR28), so "Try it out" against a
 * demo service authenticates, and the demo booking. They are public: the README shows them, and NODE_ENV=production
 * refuses to start on the demo seed.
 */
import type { z } from 'zod';
import type { bookingSuccessSchema } from '../schemas/responses';

export const DEMO_PUBLIC_KEY = 'pk_demo_PDR28_7f3a9c2e';
export const DEMO_SECRET_KEY = 'sk_demo_PDR28_d41b8e60';

/** The notification fields every demo shares, naming the demo seed's token 2908926013012565. */
export const DEMO_NOTIFICATION = {
  share_public: DEMO_PUBLIC_KEY,
  source_id: 'PDR28',
  destination_id: 'ID001',
  token_id: '2908926013012565',
};

/** The booking as the service shows it after the demo Modify Booking: every field, as the answer always carries them all. */
export const DEMO_BOOKING: z.output<typeof bookingSuccessSchema>['booking'] = {
  source_id: 'PDR28',
  booking_id: '1396',
  buyer_id: 'B-20931',
  booking_date: '10-01-2024',
  booking_category: 'hotel',
  supplier_id: 'SUP-118',
  property_name: 'Hotel Aurora',
  property_country: 'NL',
  guests_count: '3',
  room_count: '1',
  check_in: '15-02-2024',
  check_out: '18-02-2024',
  transaction_currency: 'EUR',
  transaction_amount: '450.00',
  margin_category: '%',
  transaction_margin: '12.50',
  nonrefundable_amount: '150.00',
  refundable_amount: '300.00',
  firstnight_amount: '150.00',
  cancellation_days: '7',
  auth_code: 'AUTH-5521',
  pre_auth: 'false',
  status: 'active',
  updated_at: '2024-01-21T10:15:00.000Z',
};
