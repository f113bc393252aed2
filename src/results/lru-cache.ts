/**
 * A least-recently-used map bounded by the total size of its values, for serialized
 * pages and row sets. Results never change once an execution completes, so entries
 * never go stale; they only make room.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, { value: V; size: number }>();
  private size = 0;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    /** A larger value is not kept; by default a quarter of the whole. */
    private readonly maxEntryBytes = maxBytes / 4,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Re-inserting moves the key to the young end of the Map's order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.maxEntryBytes) return; // One huge entry would flush everything else.
    const old = this.entries.get(key);
    if (old) {
      this.size -= old.size;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, size });
    this.size += size;
    for (const [oldest, entry] of this.entries) {
      if (this.size <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.size -= entry.size;
    }
  }

  get bytes(): number {
    return this.size;
  }
}
