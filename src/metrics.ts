import { collectDefaultMetrics, Counter, Histogram, Registry } from '@prometheus-io/client';

export type Outcome = 'accepted' | 'replayed' | 'rejected';

/** Prometheus metrics of one app. A registry of its own, so apps built in tests do not share counters. */
export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'receiver_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'receiver_http_request_duration_seconds',
    help: 'Time from request to response, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly operations = new Counter({
    name: 'receiver_operations_total',
    help: 'Operation requests by operation, outcome (accepted = applied, replayed, rejected) and reason of rejection',
    labelNames: ['operation', 'outcome', 'reason'] as const,
    registers: [this.registry],
  });

  private readonly storeErrors = new Counter({
    name: 'receiver_store_errors_total',
    help: 'Store calls that failed: unreachable (503), past the time limit (504), or refused for want of memory (full, 503)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  private readonly rateLimitStoreErrors = new Counter({
    name: 'receiver_rate_limit_store_errors_total',
    help: 'Rate-limit checks that could not reach the shared counts (Redis) and let the request through',
    registers: [this.registry],
  });

  /** With `processMetrics`, also Node's own: CPU, memory, event loop lag, handles, GC. */
  constructor({ processMetrics = false }: { processMetrics?: boolean } = {}) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  /** `operation` is the route's operation name, or token_event for a /v1/events request refused before its read_event was known. */
  countOperation(operation: string, outcome: Outcome, reason = ''): void {
    this.operations.inc({ operation, outcome, reason });
  }

  countStoreError(kind: 'unavailable' | 'timeout' | 'full'): void {
    this.storeErrors.inc({ kind });
  }

  countRateLimitStoreError(): void {
    this.rateLimitStoreErrors.inc();
  }
}
