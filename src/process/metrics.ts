import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from '@prometheus-io/client';
import type { StoreConnections } from '../store/postgres/pg-store';
import { SERVICE_VERSION } from './version';

export type Verdict = 'accepted' | 'replayed' | 'rejected';

/** The sinks an instance sends to, as its delivery engine reports them for the gauges (Metrics.watchDelivery). */
export type HeldSinks = Array<{ endpoint: string; oldestUndeliveredSeconds: number; disabled: boolean }>;

/** What the delivery engine tells the metrics: here, or from the delivery thread by message (delivery-thread.ts). */
export type DeliveryMetrics = Pick<Metrics, 'observeDelivery' | 'countDisable' | 'watchDelivery'>;

const STORE_ERROR_KINDS = ['unavailable', 'timeout', 'full'] as const;

/** The series of one label set, as prom-client's children: looked up once, then used for every request that has it. */
interface RequestSeries {
  count: () => void;
  observe: (seconds: number) => void;
}

/** A child per label set, made on first use: the label sets are bounded (methods, route patterns, statuses, reasons). */
function childOf<Key, Child>(children: Map<Key, Child>, key: Key, make: () => Child): Child {
  let child = children.get(key);
  if (child === undefined) children.set(key, (child = make()));
  return child;
}

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

  private readonly batchUnits = new Histogram({
    name: 'receiver_group_commit_batch_units',
    help: 'Units of work per group-commit batch (PostgreSQL): how much concurrent requests share a transaction',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });

  private readonly rateLimitStoreErrors = new Counter({
    name: 'receiver_rate_limit_store_errors_total',
    help: 'Rate-limit checks that could not reach the shared counts (Redis) and let the request through',
    registers: [this.registry],
  });

  private readonly deliveries = new Counter({
    name: 'receiver_deliveries_total',
    help: 'Attempts to hand a change on, by endpoint (or relay) and result: delivered, failed (retried) or gone (disabled)',
    labelNames: ['endpoint', 'result'] as const,
    registers: [this.registry],
  });

  private readonly deliveryDuration = new Histogram({
    name: 'receiver_delivery_attempt_duration_seconds',
    help: 'Time of each attempt to hand a change on, by endpoint (or relay): its count is the attempts made',
    labelNames: ['endpoint'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly disables = new Counter({
    name: 'receiver_endpoint_disables_total',
    help: 'Endpoints disabled, by endpoint: a change failed every retry step, or the endpoint answered 410',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  /** By method, route and status. */
  private readonly requestSeries = new Map<string, Map<string, Map<number, RequestSeries>>>();
  /** By operation, outcome and reason. */
  private readonly operationSeries = new Map<string, Map<Verdict, Map<string, () => void>>>();
  private readonly storeErrorSeries = new Map<string, () => void>();

  /** With `processMetrics`, also Node's own: CPU, memory, event loop lag, handles, GC. */
  constructor({ processMetrics = false }: { processMetrics?: boolean } = {}) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    // Each kind is a sample from the start, at 0: an alert on a rate sees nothing of a series without samples.
    for (const kind of STORE_ERROR_KINDS) this.storeErrors.labels(kind).inc(0);
    new Gauge({
      name: 'receiver_build_info',
      help: 'The running build: the service version and the Node version, always 1',
      labelNames: ['version', 'node'] as const,
      registers: [this.registry],
    }).set({ version: SERVICE_VERSION, node: process.version }, 1);
  }

  /** A group-commit batch formed with this many units. */
  observeBatch(units: number): void {
    this.batchUnits.observe(units);
  }

  /** The database's connections, read when the page renders: the pool (in use, idle, waiting callers) and LISTEN. */
  watchStoreConnections(connections: () => StoreConnections): void {
    const registers = [this.registry];
    new Gauge({
      name: 'receiver_db_pool_connections',
      help: 'Pool connections to PostgreSQL, by state: in_use (running a unit of work) or idle',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const { inUse, idle } = connections();
        this.set({ state: 'in_use' }, inUse);
        this.set({ state: 'idle' }, idle);
      },
    });
    new Gauge({
      name: 'receiver_db_pool_waiting',
      help: 'Callers waiting for a pool connection: above 0 for long, the pool (DATABASE_POOL_SIZE) or the database is the limit',
      registers,
      collect() {
        this.set(connections().waiting);
      },
    });
    new Gauge({
      name: 'receiver_db_listen_up',
      help: '1 while the connection that LISTENs for account changes is up; 0: changes are seen at the 10 s re-read only',
      registers,
      collect() {
        this.set(connections().listening ? 1 : 0);
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const byRoute = childOf(this.requestSeries, method, () => new Map<string, Map<number, RequestSeries>>());
    const series = childOf(
      childOf(byRoute, route, () => new Map<number, RequestSeries>()),
      status,
      () => {
        const labels = [method, route, String(status)] as const;
        const count = this.requests.labels(...labels);
        const latency = this.latency.labels(...labels);
        return { count: () => count.inc(), observe: (value: number) => latency.observe(value) };
      },
    );
    series.count();
    series.observe(seconds);
  }

  /** `operation` is the route's operation name, or token_event for a /v1/events request refused before its read_event was known. */
  countOperation(operation: string, outcome: Verdict, reason = ''): void {
    const byOutcome = childOf(this.operationSeries, operation, () => new Map<Verdict, Map<string, () => void>>());
    const count = childOf(
      childOf(byOutcome, outcome, () => new Map<string, () => void>()),
      reason,
      () => {
        const child = this.operations.labels(operation, outcome, reason);
        return () => child.inc();
      },
    );
    count();
  }

  countStoreError(kind: (typeof STORE_ERROR_KINDS)[number]): void {
    childOf(this.storeErrorSeries, kind, () => {
      const child = this.storeErrors.labels(kind);
      return () => child.inc();
    })();
  }

  /** With REDIS_URL: whether the shared counts are reachable, read when the page renders. */
  watchRedis(reachable: () => boolean): void {
    new Gauge({
      name: 'receiver_redis_up',
      help: '1 while Redis (the shared rate-limit counts) answers; 0 during an outage, when requests go through uncounted',
      registers: [this.registry],
      collect() {
        this.set(reachable() ? 1 : 0);
      },
    });
  }

  countRateLimitStoreError(): void {
    this.rateLimitStoreErrors.inc();
  }

  /** One attempt to hand a change on to a sink (a webhook endpoint, the NATS relay), by its result. */
  observeDelivery(endpoint: string, result: 'delivered' | 'failed' | 'gone', seconds: number): void {
    this.deliveries.labels(endpoint, result).inc();
    this.deliveryDuration.labels(endpoint).observe(seconds);
  }

  /** A sink disabled: a change failed every step, or the endpoint said it is gone. */
  countDisable(endpoint: string): void {
    this.disables.labels(endpoint).inc();
  }

  /**
   * The sinks this instance sends to (it holds their lease), read when the page renders: the age of the oldest change
   * not yet taken, and whether it is disabled. Another instance's sinks are its own to report.
   */
  watchDelivery(sinks: () => HeldSinks): void {
    const registers = [this.registry];
    new Gauge({
      name: 'receiver_delivery_oldest_undelivered_seconds',
      help: 'Age of the oldest change not yet delivered, per endpoint this instance sends to (0: none waiting)',
      labelNames: ['endpoint'] as const,
      registers,
      collect() {
        this.reset();
        for (const sink of sinks()) this.set({ endpoint: sink.endpoint }, sink.oldestUndeliveredSeconds);
      },
    });
    new Gauge({
      name: 'receiver_endpoint_disabled',
      help: 'Per endpoint this instance sends to: 1 while disabled (nothing is sent; nothing is dropped), else 0',
      labelNames: ['endpoint'] as const,
      registers,
      collect() {
        this.reset();
        for (const sink of sinks()) this.set({ endpoint: sink.endpoint }, sink.disabled ? 1 : 0);
      },
    });
  }
}
