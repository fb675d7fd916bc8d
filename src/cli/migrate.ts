import { Pool } from 'pg';
import { loadConfig, loadEnvFile } from '../process/config';
import { migrate } from '../store/postgres/migrate';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (the service also does this at start). */
async function main(): Promise<void> {
  loadEnvFile();
  const { database } = loadConfig(process.env);
  if (!database) throw new Error('DATABASE_URL is not set: there is no database to migrate');
  const pool = new Pool({ connectionString: database.url, connectionTimeoutMillis: database.connectTimeoutMs });
  try {
    const applied = await migrate(pool);
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply: the schema is up to date\n');
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
