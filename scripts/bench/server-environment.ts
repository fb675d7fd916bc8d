/**
 * The environment the bench's servers run with: production, on loopback, on the ports given (0: the kernel's
 * choice), without rate limits (a load from one address would hit them), logging at `logLevel`. run.ts and
 * instructions.ts start their receivers with it, npm start's own defaults added.
 */
export function serverEnvironment(port: number, metricsPort: number, logLevel: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '0',
    RATE_LIMIT_PER_ADDRESS_PER_MINUTE: '0',
    LOG_LEVEL: logLevel,
  };
}
