import { statusChangeSchema, STATUS_CHANGED_EVENT } from '../schemas/status-change';
import { tokenEventSchema } from '../schemas/token-event';
import { parsePayload } from '../schemas/validate';
import { withdrawSchema } from '../schemas/withdraw';
import { changeTokenStatus, withdraw } from '../services/token-notifications';
import type { OperationRoute, OperationRouteDeps } from './operations';

/** Status Change, Withdraw (POST, and GET with a body as in the published samples) and the one-URL dispatcher. */
export function tokenRoutes({ store, now }: OperationRouteDeps): OperationRoute[] {
  const statusChange = (body: unknown) => changeTokenStatus(store, parsePayload(statusChangeSchema, body));
  const withdrawal = (body: unknown) => withdraw(store, parsePayload(withdrawSchema, body), now());
  return [
    { path: '/v1/tokens/status-change', operation: 'status_change', methods: ['POST'], handle: statusChange },
    { path: '/v1/tokens/withdraw', operation: 'withdraw', methods: ['GET', 'HEAD', 'POST'], handle: withdrawal },
    {
      path: '/v1/events',
      operation: 'token_event',
      methods: ['POST'],
      handle: (body, _params, state) => {
        const isStatusChange = parsePayload(tokenEventSchema, body).read_event === STATUS_CHANGED_EVENT;
        state.operation = isStatusChange ? 'status_change' : 'withdraw';
        return isStatusChange ? statusChange(body) : withdrawal(body);
      },
    },
  ];
}
