import type { Router } from 'express';
import { z } from 'zod';
import type { DeliveryControl, EndpointView } from '../delivery/engine';
import type { AttemptRecord } from '../delivery/positions';
import { NotFoundError, ValidationError } from '../errors';
import { methodNotAllowed } from '../middleware/errors';
import { readJsonBody } from '../middleware/json-body';
import { requestContext } from '../middleware/request-context';
import { sendJson } from '../middleware/send-json';
import { attemptsQuerySchema, replaySchema } from '../schemas/admin';
import { text } from '../schemas/fields';
import { parsePayload } from '../schemas/validate';
import type { Store } from '../store/store';

function attemptView(attempt: AttemptRecord) {
  return {
    id: attempt.id,
    change_id: attempt.changeId,
    source_id: attempt.sourceId,
    seq: attempt.seq,
    attempt: attempt.attempt,
    result: attempt.result,
    status: attempt.status,
    error: attempt.error,
    duration_ms: Math.round(attempt.durationMs),
    attempted_at: attempt.attemptedAt.toISOString(),
  };
}

function endpointView({ state, positions, lastAttempt }: EndpointView) {
  return {
    id: state.sinkId,
    state: state.enabled ? 'enabled' : 'disabled',
    reason: state.reason,
    positions: positions.map((position) => ({
      source_id: position.sourceId,
      position: position.position,
      oldest_undelivered: position.oldestUndelivered && {
        seq: position.oldestUndelivered.seq,
        created_at: position.oldestUndelivered.createdAt.toISOString(),
      },
    })),
    last_attempt: lastAttempt && attemptView(lastAttempt),
  };
}

const NO_ENDPOINT = 'Endpoint not found: the seed lists no endpoint with this id';

/**
 * Webhooks out for ops (contract section 13.3): each endpoint's state, positions and attempts; enable and replay.
 * Without a delivery engine (the seed lists no endpoint) the list is empty and every id is unknown.
 */
export function endpointRoutes(router: Router, store: Store, delivery: DeliveryControl | undefined, bodyLimitBytes: number): void {
  const endpointOf = async (id: string) => {
    const view = await delivery?.endpoint(id);
    if (!view) throw new NotFoundError(NO_ENDPOINT, 'endpoint_not_found');
    return view;
  };
  const idOf = (params: unknown) => parsePayload(z.object({ id: text() }), params).id;

  router
    .route('/admin/endpoints')
    .get(async (_req, res) => {
      const views = await Promise.all((delivery?.sinkIds() ?? []).map((id) => endpointOf(id)));
      sendJson(res, 200, JSON.stringify({ endpoints: views.map(endpointView) }));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/admin/endpoints/:id/attempts')
    .get(async (req, res) => {
      const id = idOf(req.params);
      const { limit, before } = parsePayload(attemptsQuerySchema, req.query);
      const attempts = await delivery?.attempts(id, limit, before);
      if (!attempts) throw new NotFoundError(NO_ENDPOINT, 'endpoint_not_found');
      sendJson(res, 200, JSON.stringify({ attempts: attempts.map(attemptView) }));
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/admin/endpoints/:id/enable')
    .post(async (req, res) => {
      const view = await delivery?.enable(idOf(req.params));
      if (!view) throw new NotFoundError(NO_ENDPOINT, 'endpoint_not_found');
      sendJson(res, 200, JSON.stringify(endpointView(view)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/admin/endpoints/:id/replay')
    .post(readJsonBody(bodyLimitBytes), async (req, res) => {
      // The body is checked first: a bad one is a 400 whatever the id, as every route's (the OpenAPI conformance test).
      const replay = parsePayload(replaySchema, requestContext(res).body.parsed);
      const current = await endpointOf(idOf(req.params));
      // A position is kept for an account of the seed whose changes the endpoint takes, never for any string ops type.
      if (!(await delivery?.takesAccount(current.state.sinkId, replay.source_id)) || !(await store.findAccount(replay.source_id))) {
        throw new ValidationError(`Invalid field: source_id`, [
          { field: 'source_id', message: `must be an account of the seed whose changes the endpoint ${current.state.sinkId} takes` },
        ]);
      }
      const position = current.positions.find((candidate) => candidate.sourceId === replay.source_id)?.position ?? 0;
      // Forward would skip changes the endpoint never got: a replay only moves back (or stays).
      if (replay.after > position) {
        throw new ValidationError(`Invalid field: after`, [
          {
            field: 'after',
            message: `must be at most the endpoint's position in ${replay.source_id}, ${position}: a replay only moves back`,
          },
        ]);
      }
      const view = await delivery?.replay(current.state.sinkId, replay.source_id, replay.after);
      if (!view) throw new NotFoundError(NO_ENDPOINT, 'endpoint_not_found');
      sendJson(res, 200, JSON.stringify(endpointView(view)));
    })
    .all(methodNotAllowed(['POST']));
}
