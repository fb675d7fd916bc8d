/**
 * OpenTelemetry traces (contract section 12), when OTEL_EXPORTER_OTLP_ENDPOINT is set (in the environment or
 * `.env`): the Node SDK with the OTLP/HTTP exporter and the http, express and pg instrumentations. server.ts
 * imports this module before anything else, since an instrumentation patches a module as it is first required.
 * Without the setting nothing of OpenTelemetry is loaded: its packages are required only inside startTracing.
 */
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import type { Span, SpanContext } from '@opentelemetry/api';
import { loadEnvFile } from './config';
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

function startTracing(): Tracing {
  const load = createRequire(__filename);
  const api = load('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { NodeSDK } = load('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } = load('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { HttpInstrumentation } = load('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = load(
    '@opentelemetry/instrumentation-express',
  ) as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } = load('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');

  const sdk = new NodeSDK({
    // An empty value counts as unset, as for every setting (.env.example lists it empty).
    serviceName: process.env.OTEL_SERVICE_NAME || 'token-booking-receiver',
    traceExporter: new OTLPTraceExporter(),
    // Traces only: the metrics are Prometheus's (/metrics), the logs pino's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // Each request's span is named after its operation (the catalogue's name), once a route named it.
        applyCustomAttributesOnSpan: (span: Span, _request: unknown, response: unknown) => {
          const operation = requestContextIfBegun(response as ServerResponse)?.operation;
          if (operation === undefined) return;
          span.updateName(operation);
          span.setAttribute('receiver.operation', operation);
        },
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
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

loadEnvFile();
export const tracing: Tracing | undefined = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? startTracing() : undefined;
