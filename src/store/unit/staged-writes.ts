/**
 * Writes staged before a store applies them: a unit's, until it ends, and on PostgreSQL its batch's, until COMMIT
 * (a unit's are taken in only when it succeeds). Every write here passed the unit's rules (unit-of-work.ts).
 */
import { strict as assert } from 'node:assert';
import type { Holdings } from '../store';
import { WRITTEN, type WrittenKind, type WrittenRecords } from './kinds';

type ByKind = { -readonly [Kind in WrittenKind]: Map<string, WrittenRecords[Kind]> };

/** Every kind's map, empty and shared until the first write of that kind (most units write one or two kinds). */
const NONE = new Map<string, never>();

function byKind(): ByKind {
  return { tokens: NONE, ledger: NONE, bookings: NONE, keyedRequests: NONE, deliveries: NONE, changes: NONE };
}

/** The kind's own map in `maps`, made at its first write. */
function writable<Kind extends WrittenKind>(maps: ByKind, kind: Kind): ByKind[Kind] {
  if (maps[kind] === NONE) maps[kind] = new Map() as ByKind[Kind];
  return maps[kind];
}

/** Counts held plus counts added; either may be missing (none). */
export function plus(held: Holdings | null | undefined, added: Holdings | undefined): Holdings {
  return {
    tokens: (held?.tokens ?? 0) + (added?.tokens ?? 0),
    bookings: (held?.bookings ?? 0) + (added?.bookings ?? 0),
    keys: (held?.keys ?? 0) + (added?.keys ?? 0),
  };
}

export class StagedWrites {
  readonly created = byKind();
  readonly saved = byKind();
  /** What is added to each account's holdings, by source_id. */
  readonly holdings = new Map<string, Holdings>();

  /** The row as these writes leave it; undefined when they do not write it. */
  own<Kind extends WrittenKind>(kind: Kind, key: string): WrittenRecords[Kind] | undefined {
    // Sizes first: a key is a new string, hashed at its first lookup, and most units never wrote the kind asked.
    const saved = this.saved[kind];
    const created = this.created[kind];
    return (saved.size > 0 ? saved.get(key) : undefined) ?? (created.size > 0 ? created.get(key) : undefined);
  }

  /** A new row: each is created once (a database's unique key refuses a second). */
  create<Kind extends WrittenKind>(kind: Kind, key: string, item: WrittenRecords[Kind]): void {
    this.assertNew(kind, key);
    writable(this.created, kind).set(key, item);
  }

  private assertNew(kind: WrittenKind, key: string): void {
    // The message only when it fails: every creation of every unit passes here.
    if (this.created[kind].has(key) || this.saved[kind].has(key)) assert.fail(`${kind} ${JSON.stringify(key)} created twice`);
  }

  /**
   * A row saved. Invariant: a row created earlier in the same writes stays an insert, of the row as it ends up:
   * an insert and an update of one row cannot share a statement, whose parts see one snapshot.
   */
  save<Kind extends WrittenKind>(kind: Kind, key: string, item: WrittenRecords[Kind]): void {
    if (this.created[kind].has(key)) this.created[kind].set(key, item);
    else writable(this.saved, kind).set(key, item);
  }

  add(sourceId: string, added: Holdings): void {
    this.holdings.set(sourceId, plus(this.holdings.get(sourceId), added));
  }

  /**
   * Another's writes after these, as if they had been made here: a succeeded unit's into its batch's. All or
   * nothing: every creation is checked new before any write is taken in, so a failed invariant leaves these as
   * they were (and fails the batch, batch.ts).
   */
  takeIn(other: StagedWrites): void {
    for (const kind of WRITTEN) for (const key of other.created[kind].keys()) this.assertNew(kind, key);
    for (const kind of WRITTEN) {
      for (const [key, item] of other.created[kind]) writable(this.created, kind).set(key, item as never);
      for (const [key, item] of other.saved[kind]) this.save(kind, key, item as never);
    }
    for (const [sourceId, added] of other.holdings) this.add(sourceId, added);
  }
}
