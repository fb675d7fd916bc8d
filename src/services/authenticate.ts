import { UnauthorizedError } from '../errors';
import { hashKey, keyMatches } from '../secrets';
import type { Account, Store } from '../store/store';

type KeyKind = 'publicKeyHash' | 'secretKeyHash';

/** Compared against when the account is unknown, so both failures take the same time. */
const UNKNOWN_ACCOUNT_HASH = hashKey('\u0000unknown account\u0000');

/**
 * Finds the caller's account and checks the key it presented. An unknown
 * account and a wrong key fail alike, so callers cannot probe for accounts.
 * With no key presented (optional in Status Change) only the account must exist.
 */
export async function authenticate(store: Store, sourceId: string, key: string | undefined, kind: KeyKind): Promise<Account> {
  const account = await store.findAccount(sourceId);
  const matches = key === undefined || keyMatches(key, account ? account[kind] : UNKNOWN_ACCOUNT_HASH);
  if (!account || !matches) throw new UnauthorizedError();
  return account;
}
