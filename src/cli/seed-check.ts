import { ConfigError, loadConfig, loadEnvFile } from '../process/config';
import {
  incomingSigners,
  readSeedFile,
  refuseEndpointsAgainstSettings,
  refusePublishedKeysInProduction,
  SeedFileError,
} from '../seed/file';

/**
 * `npm run seed:check FILE`: validates a seed file as the service does at start, without starting it, under the same
 * settings (the environment and `.env`: NODE_ENV=production refuses published keys, DELIVERY_ALLOW_HTTP allows http://
 * endpoints). Prints what the file holds, or the file and every bad entry, and exits 1.
 */
function main(file: string | undefined): number {
  if (!file) {
    process.stderr.write('usage: npm run seed:check FILE\n');
    return 2;
  }
  try {
    loadEnvFile();
    const config = loadConfig(process.env);
    const seed = readSeedFile(file);
    refusePublishedKeysInProduction(seed, file, config.production);
    refuseEndpointsAgainstSettings(seed.endpoints, file, {
      production: config.production,
      allowHttp: config.delivery.allowHttp,
      incomingSigners: incomingSigners(seed.accounts, config),
    });
    process.stdout.write(
      `${file}: valid: ${seed.accounts.length} accounts, ${seed.tokens.length} tokens, ${seed.bookings.length} bookings, ${seed.endpoints.length} endpoints\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof SeedFileError || error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.problems.join('\n')}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv[2]);
