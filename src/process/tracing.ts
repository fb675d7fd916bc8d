/**
 * OpenTelemetry traces (contract section 12), when OTEL_EXPORTER_OTLP_ENDPOINT is set (in the environment or
 * `.env`): the Node SDK with the OTLP/HTTP exporter and the http, express and pg instrumentations, sampled at the
 * operator's ratio. server.ts
 * imports this module before anything else, since an instrumentation patches a module as it is first required.
 * Without the setting nothing of OpenTelemetry is loaded: its packages are required only inside startTracing.
 */
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span, SpanContext } from '@opentelemetry/api';
import { instanceIdIn, loadEnvFile, traceSampling, type TraceSampling } from './config';
import { redactedQueryString } from './redaction';
import { requestContextIfBegun } from '../middleware/request-context';
import type { StoreTracing } from '../store/postgres/group-commit';
import { SERVICE_VERSION } from './version';

export interface Tracing {
  /** What a log line carries of the active span: its trace_id and span_id, none outside one. */
  logFields(): Record<string, string>;
  /** Spans for group commit's batches, linked to their units' requests. */
  store: StoreTracing;
  /** Exports what is left; the process then exits. */
  shutdown(): Promise<void>;
}

/** What the service never traces: the probes and the metrics scrape, asked every few seconds by machines (contract section 12). */
const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

function isUntraced(request: IncomingMessage): boolean {
  const url = request.url ?? '';
  const queryStart = url.indexOf('?');
  return UNTRACED_PATHS.has(queryStart === -1 ? url : url.slice(0, queryStart));
}

function startTracing(sampling: TraceSampling): Tracing {
  const load = createRequire(__filename);
  const api = load('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { NodeSDK } = load('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const resources = load('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = load(
    '@opentelemetry/sdk-trace',
  ) as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = load('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = load('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } = load(
    '@opentelemetry/instrumentation-express',
  ) as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } = load('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');

  const operatorRatio = new TraceIdRatioBasedSampler(sampling.ratio);
  const sdk = new NodeSDK({
    // An empty value counts as unset, as for every setting (.env.example lists it empty).
    serviceName: process.env.OTEL_SERVICE_NAME || 'token-booking-receiver',
    // The instance as the log lines name it, so a trace joins its lines; the version as receiver_build_info gives it.
    resource: resources
      .defaultResource()
      .merge(resources.resourceFromAttributes({ 'service.version': SERVICE_VERSION, 'service.instance.id': instanceIdIn(process.env) })),
    // The SDK's own detectors less serviceInstanceIdDetector, whose random id would replace INSTANCE_ID.
    resourceDetectors: [resources.processDetector, resources.hostDetector, resources.osDetector, resources.envDetector],
    // A caller's sampled flag decides nothing unless the operator trusts the callers (TRACES_TRUST_CALLER_SAMPLING):
    // anyone on the partners' port could otherwise multiply the collector's load, or hide its requests. The caller's
    // trace id is continued either way; spans under a span of this process follow it.
    sampler: new ParentBasedSampler({
      root: operatorRatio,
      remoteParentSampled: sampling.trustCaller ? new AlwaysOnSampler() : operatorRatio,
      remoteParentNotSampled: sampling.trustCaller ? new AlwaysOffSampler() : operatorRatio,
    }),
    traceExporter: new OTLPTraceExporter(),
    // Traces only: the metrics are Prometheus's (/metrics), the logs pino's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: isUntraced,
        // The log's redaction (process/redaction.ts) replaces the SDK's shorter list in the span's url.query.
        startIncomingSpanHook: (request) => {
          const url = request.url ?? '';
          const queryStart = url.indexOf('?');
          return queryStart === -1 ? {} : { 'url.query': redactedQueryString(url.slice(queryStart + 1)) };
        },
        // Outgoing calls outside a request (the exporter's, a background delivery) would each be a trace of their own.
        requireParentforOutgoingSpans: true,
        // The span is named `{method} {route}` (the semantic conventions; the route from the express instrumentation);
        // the operation, once a route named it, is an attribute.
        applyCustomAttributesOnSpan: (span: Span, _request: unknown, response: unknown) => {
          const operation = requestContextIfBegun(response as ServerResponse)?.operation;
          if (operation !== undefined) span.setAttribute('receiver.operation', operation);
        },
      }),
      // Only for the route it gives the request's span: a span per router layer was 20 for one probe.
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.ROUTER, ExpressLayerType.MIDDLEWARE, ExpressLayerType.REQUEST_HANDLER],
      }),
      // Round trips are spans of a request's trace or of a group commit batch's; the store's own work (the retention
      // sweep, migrations, re-reading accounts) makes none, rather than a root trace per query.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  const tracer = api.trace.getTracer('token-booking-receiver', SERVICE_VERSION);

  return {
    logFields(): Record<string, string> {
      const span = api.trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    store: {
      capture: () => api.trace.getActiveSpan()?.spanContext(),
      inBatchSpan: (units, traces, run) =>
        // A trace of its own (root): a batch serves many requests, each linked.
        tracer.startActiveSpan(
          'group commit batch',
          {
            root: true,
            attributes: { 'receiver.batch.units': units },
            links: traces.filter((trace) => trace !== undefined).map((trace) => ({ context: trace as SpanContext })),
          },
          async (span) => {
            try {
              return await run();
            } finally {
              span.end();
            }
          },
        ),
    },
    shutdown: () => sdk.shutdown(),
  };
}

function tracingFromEnvironment(): Tracing | undefined {
  loadEnvFile();
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  // A bad sampling setting stops the start in loadConfig, which names it; until then nothing is sampled.
  return startTracing(traceSampling(process.env) ?? { ratio: 0, trustCaller: false });
}

export const tracing: Tracing | undefined = tracingFromEnvironment();
