import { Pool } from 'pg';
import { ConfigError, loadConfig, loadEnvFile } from '../process/config';
import { DatabaseStartError, exitForStartFailure, startProblemsOf } from '../process/start-failure';
import { migrate } from '../store/postgres/migrate';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (the service also does this at start). */
async function main(): Promise<void> {
  loadEnvFile();
  const { database } = loadConfig(process.env);
  if (!database) throw new ConfigError(['DATABASE_URL is not set: there is no database to migrate']);
  const pool = new Pool({ connectionString: database.url, connectionTimeoutMillis: database.connectTimeoutMs });
  try {
    // A database that does not answer is the operator's to fix, said as the server says it; a migration's failure is not.
    await pool.connect().then(
      (client) => client.release(),
      (error: unknown) => {
        throw new DatabaseStartError(error);
      },
    );
    const applied = await migrate(pool);
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply: the schema is up to date\n');
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => exitForStartFailure(error, startProblemsOf(error), 'the migrations could not be applied'));
