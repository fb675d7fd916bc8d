/** A column twice as long (or as long as asked), holding what the old one held. */
export function grown<Column extends Float64Array | Int32Array | Uint32Array | Uint8Array>(column: Column, capacity: number): Column {
  const next = new (column.constructor as new (length: number) => Column)(capacity);
  next.set(column);
  return next;
}

/** Names that repeat across many rows (sources, destinations) as small numbers: each row holds the number. */
export class NameTable {
  private readonly names: string[] = [];
  private readonly refs = new Map<string, number>();

  refOf(name: string): number {
    let ref = this.refs.get(name);
    if (ref === undefined) {
      ref = this.names.push(name) - 1;
      this.refs.set(name, ref);
    }
    return ref;
  }

  /** The name's ref, or -1 when the table has never seen it. */
  knownRefOf(name: string): number {
    return this.refs.get(name) ?? -1;
  }

  nameOf(ref: number): string {
    return this.names[ref];
  }
}
