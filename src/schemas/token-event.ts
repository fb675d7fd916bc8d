import { z } from 'zod';
import { oneOf } from './fields';
import { STATUS_CHANGED_EVENT } from './status-change';
import { WITHDRAWN_EVENT } from './withdraw';

/** `POST /v1/events` reads only `read_event` to pick the operation; the operation's schema does the rest. */
export const tokenEventSchema = z.object({
  read_event: oneOf([STATUS_CHANGED_EVENT, WITHDRAWN_EVENT]),
});
