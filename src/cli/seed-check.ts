import { readSeedFile, SeedFileError } from '../seed/file';

/**
 * `npm run seed:check FILE`: validates a seed file as the service does at start, without starting it. Prints
 * what the file holds, or the file and every bad entry, and exits 1.
 */
function main(file: string | undefined): number {
  if (!file) {
    process.stderr.write('usage: npm run seed:check FILE\n');
    return 2;
  }
  try {
    const seed = readSeedFile(file);
    process.stdout.write(
      `${file}: valid: ${seed.accounts.length} accounts, ${seed.tokens.length} tokens, ${seed.bookings.length} bookings\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof SeedFileError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv[2]);
