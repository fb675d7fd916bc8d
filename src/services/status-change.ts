/** Status Change: a token's status, along the changes the domain allows. Idempotent by nature: the same status changes nothing. */
import { canChangeStatus } from '../domain/tokens';
import { ConflictError } from '../errors';
import type { StatusChangeRequest } from '../schemas/status-change';
import type { Account, StoreTransaction } from '../store/store';
import { APPLIED, type Outcome } from './apply-once';
import { lockCallerToken } from './token-checks';

export async function changeTokenStatus(tx: StoreTransaction, request: StatusChangeRequest, account: Account): Promise<Outcome> {
  const token = await lockCallerToken(tx, account, request);
  const target = request.status;
  if (target === undefined || target === token.status) return APPLIED;
  if (!canChangeStatus(token.status, target)) {
    throw new ConflictError(`Token is deleted; a deleted token cannot become ${target}`, 'status_final');
  }
  await tx.saveToken({ ...token, status: target });
  return APPLIED;
}
