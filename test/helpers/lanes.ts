import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Streams of withdrawals for the process tests: one account, one token per sending lane, so that each lane
 * knows exactly which balance to state.
 */
export class Lanes {
  /** Each token's opening balance, in cents. */
  static readonly START_BALANCE = 100_000_000;

  constructor(
    readonly count: number,
    private readonly sourceId: string,
    private readonly firstTokenId: number,
  ) {}

  tokenId(lane: number): string {
    return String(this.firstTokenId + lane);
  }

  /** Writes the seed file and returns its path. */
  writeSeed(): string {
    const tokens = Array.from({ length: this.count }, (_, lane) => ({
      token_id: this.tokenId(lane),
      source_id: this.sourceId,
      destination_id: 'D1',
      status: 'active',
      balance: (Lanes.START_BALANCE / 100).toFixed(2),
    }));
    const key = `pk_${this.sourceId.toLowerCase()}`;
    const seed = {
      accounts: [{ source_id: this.sourceId, share_public: key, share_secret: `sk_${this.sourceId.toLowerCase()}`, destinations: ['D1'] }],
      tokens,
    };
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'lanes-')), 'seed.json');
    writeFileSync(file, JSON.stringify(seed));
    return file;
  }

  /**
   * What the database holds against the ids acknowledged with a 200: how many ledger rows, the acknowledged ids
   * missing from the ledger, the rows that repeat an id, and the tokens whose balance is not the opening balance
   * less exactly what their ledger rows took.
   */
  async reconcile(query: (text: string) => Promise<{ rows: unknown[] }>, acknowledged: readonly string[]) {
    const ledger = (await query('SELECT transaction_id, token_id, amount FROM ledger')).rows as Array<{
      transaction_id: string;
      token_id: string;
      amount: string;
    }>;
    const balances = (await query('SELECT token_id, balance FROM tokens')).rows as Array<{ token_id: string; balance: string }>;
    const inLedger = new Set(ledger.map((row) => row.transaction_id));
    const spent = (tokenId: string) => ledger.filter((row) => row.token_id === tokenId).reduce((sum, row) => sum + Number(row.amount), 0);
    return {
      rows: ledger.length,
      missing: acknowledged.filter((id) => !inLedger.has(id)),
      duplicates: ledger.length - inLedger.size,
      unbalanced: balances
        .filter(({ token_id, balance }) => Number(balance) !== Lanes.START_BALANCE - spent(token_id))
        .map((row) => row.token_id),
    };
  }

  /** A withdrawal of 1.00 from the lane's token, stating the balance after it. */
  withdrawalBody(lane: number, transactionId: string, balanceAfter: number): string {
    return JSON.stringify({
      share_public: `pk_${this.sourceId.toLowerCase()}`,
      read_event: 'token.withdrawn_created',
      source_id: this.sourceId,
      destination_id: 'D1',
      token_id: this.tokenId(lane),
      transaction_id: transactionId,
      withdrawn_amount: '1.00',
      token_balance: (balanceAfter / 100).toFixed(2),
    });
  }
}
