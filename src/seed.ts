import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BOOKING_FIELDS, type BookingFields } from './schemas/booking';
import { seedSchema, type SeedFile } from './schemas/seed';
import { fieldProblems } from './schemas/validate';
import { hashKey } from './secrets';
import type { SeedData } from './store/store';

/** Shipped with the service and served when SEED_FILE is unset, so the README's examples work as written. */
export const DEMO_SEED_FILE = path.resolve(__dirname, '..', 'seed', 'demo.json');

export class SeedFileError extends Error {}

/** Turns the validated file into store records: keys become hashes here, before the store sees them. */
export function toSeedData(seed: SeedFile, loadedAt: Date): SeedData {
  return {
    accounts: seed.accounts.map((account) => ({
      sourceId: account.source_id,
      publicKeyHash: hashKey(account.share_public),
      secretKeyHash: hashKey(account.share_secret),
      destinations: new Set(account.destinations),
    })),
    tokens: seed.tokens.map((token) => ({
      tokenId: token.token_id,
      sourceId: token.source_id,
      destinationId: token.destination_id,
      status: token.status,
      balance: token.balance,
    })),
    bookings: seed.bookings.map((booking) => ({
      sourceId: booking.source_id,
      bookingId: booking.booking_id,
      fields: Object.fromEntries(BOOKING_FIELDS.map((field) => [field, booking[field]])) as BookingFields,
      updatedAt: booking.updated_at ? new Date(booking.updated_at) : loadedAt,
    })),
  };
}

/** Reads and validates a seed file; the error names the file and every bad entry. */
export function readSeedFile(file: string, loadedAt = new Date()): SeedData {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SeedFileError(`Seed file ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
  const result = seedSchema.safeParse(raw);
  if (!result.success) {
    const problems = fieldProblems(result.error.issues).map((problem) => `${problem.field} ${problem.message}`);
    throw new SeedFileError(`Seed file ${file} is invalid: ${problems.join('; ')}`);
  }
  return toSeedData(result.data, loadedAt);
}
