import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export const BENCH_ACCOUNT = {
  source_id: 'BENCH',
  share_public: 'pk_bench_public_key_0001',
  share_secret: 'sk_bench_secret_key_0001',
  destinations: ['D1'],
};
export const BOOKINGS = 1000;
/** Each token starts with 1,000,000.00 so that a small seed can take many withdrawals of 0.01. */
export const START_BALANCE_CENTS = 100_000_000;

export const tokenIdOf = (index: number) => String(1_000_000_000_000 + index);
export const bookingIdOf = (index: number) => `B${index}`;

/** Writes a seed of `tokens` active tokens and BOOKINGS bookings of one account, streaming (1,000,000 tokens is ~110 MB). */
export async function writeBenchSeed(file: string, tokens: number): Promise<void> {
  const out = createWriteStream(file);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`{"accounts":[${JSON.stringify(BENCH_ACCOUNT)}],"tokens":[`);
  const balance = (START_BALANCE_CENTS / 100).toFixed(2);
  for (let i = 0; i < tokens; i += 1) {
    await write(
      `${i === 0 ? '' : ','}{"token_id":"${tokenIdOf(i)}","source_id":"BENCH","destination_id":"D1","status":"active","balance":"${balance}"}`,
    );
  }
  await write('],"bookings":[');
  for (let i = 0; i < BOOKINGS; i += 1) {
    const booking = {
      booking_id: bookingIdOf(i),
      source_id: 'BENCH',
      buyer_id: '',
      booking_date: '21-01-2024',
      booking_category: 'hotel',
      supplier_id: 'SUP-1',
      property_name: 'Bench Hotel',
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
    };
    await write(`${i === 0 ? '' : ','}${JSON.stringify(booking)}`);
  }
  await write(']}');
  out.end();
  await once(out, 'finish');
}
