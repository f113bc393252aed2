/**
 * A lane of work shared fairly between keys (DESIGN §12): at most `slots` items run at once,
 * at most `perKey` of them one key's, and a key has at most `queuedPerKey` items waiting.
 * When a slot frees, the next item to start is the oldest waiting item of the key that has the
 * fewest running, the key that started something least recently first among equals: a key
 * with nothing running goes before one already running, and keys take turns, so no key holds
 * every slot nor the head of the queue, however many items it sends.
 *
 * It decides who starts, nothing else: what an item does is its owner's (`start` is called when
 * it may run; `finished` gives its slot back). Executions, results readers and the Postgres
 * wire's statements each have lanes of their own.
 */

export interface LaneOptions {
  /** Items running at once, all keys together. */
  slots: number;
  /** Items of one key running at once. */
  perKey: number;
  /** Items of one key waiting at once; beyond it `enqueue` throws LaneFullError. */
  queuedPerKey: number;
}

/** A key's waiting items are at the bound: the caller answers 429. */
export class LaneFullError extends Error {
  override name = 'LaneFullError';
  constructor(
    readonly key: string,
    readonly limit: number,
  ) {
    super(`${limit} items of ${key} are waiting already`);
  }
}

interface Waiting {
  id: string;
  start: () => void;
}

interface KeyState {
  running: number;
  waiting: Waiting[];
  /** When this key last started an item (a counter): the smallest goes first among equals. */
  lastStarted: number;
}

/** Idle keys remembered (their last start) before they are forgotten. */
const IDLE_KEYS_KEPT = 10_000;

export class FairLane {
  private readonly keys = new Map<string, KeyState>();
  private readonly waitingKey = new Map<string, string>();
  /** The keys of the running items, in the order they started. */
  private readonly runningKeys: string[] = [];
  private running = 0;
  private starts = 0;

  constructor(private readonly options: LaneOptions) {}

  get runningCount(): number {
    return this.running;
  }

  get waitingCount(): number {
    return this.waitingKey.size;
  }

  runningOf(key: string): number {
    return this.keys.get(key)?.running ?? 0;
  }

  waitingOf(key: string): number {
    return this.keys.get(key)?.waiting.length ?? 0;
  }

  /** Whether `enqueue` would refuse an item of `key` now. */
  isFull(key: string): boolean {
    return this.waitingOf(key) >= this.options.queuedPerKey;
  }

  get limits(): Readonly<LaneOptions> {
    return this.options;
  }

  /**
   * Queues item `id` of `key`; `start` is called (synchronously, if a slot is free now) when it
   * may run, and the caller then owes one `finished(key)`.
   */
  enqueue(key: string, id: string, start: () => void): void {
    const state = this.state(key);
    if (state.waiting.length >= this.options.queuedPerKey)
      throw new LaneFullError(key, this.options.queuedPerKey);
    state.waiting.push({ id, start });
    this.waitingKey.set(id, key);
    this.dispatch();
  }

  /** Takes a waiting item out of the queue; false when it is not waiting (running, or unknown). */
  withdraw(id: string): boolean {
    const key = this.waitingKey.get(id);
    if (key === undefined) return false;
    const state = this.keys.get(key) as KeyState;
    state.waiting.splice(
      state.waiting.findIndex((w) => w.id === id),
      1,
    );
    this.waitingKey.delete(id);
    this.forgetIdleKeys();
    return true;
  }

  /** An item of `key` that was started has ended: its slot goes to the next one. */
  finished(key: string): void {
    const state = this.keys.get(key);
    if (!state || state.running === 0) throw new Error(`no item of ${key} is running`);
    state.running--;
    this.running--;
    this.runningKeys.splice(this.runningKeys.indexOf(key), 1);
    this.forgetIdleKeys();
    this.dispatch();
  }

  /** Removes every waiting item (shutdown); their `start` is never called. */
  clearWaiting(): string[] {
    const ids = [...this.waitingKey.keys()];
    for (const state of this.keys.values()) state.waiting.length = 0;
    this.waitingKey.clear();
    this.forgetIdleKeys();
    return ids;
  }

  /**
   * 1-based place of a waiting item in the order items would start if nothing more came and
   * the running ones ended in the order they started: every waiting item of another key that
   * starts before it counts, as does every earlier item of its own key. Undefined once it runs.
   */
  position(id: string): number | undefined {
    if (!this.waitingKey.has(id)) return undefined;
    return this.startOrder().indexOf(id) + 1;
  }

  /** The waiting items in the order they would start (see `position`), by this lane's own rules. */
  private startOrder(): string[] {
    const keys = new Map<string, SimulatedKey>(
      [...this.keys].map(([key, state]) => [
        key,
        { waiting: state.waiting, running: state.running, lastStarted: state.lastStarted, taken: 0 },
      ]),
    );
    const runningKeys = [...this.runningKeys];
    let running = this.running;
    let clock = this.starts;
    const order: string[] = [];
    while (order.length < this.waitingKey.size) {
      let best: SimulatedKey | undefined;
      let bestKey = '';
      if (running < this.options.slots) {
        for (const [key, candidate] of keys) {
          if (candidate.taken >= candidate.waiting.length || candidate.running >= this.options.perKey)
            continue;
          if (!best || before(candidate, best)) {
            best = candidate;
            bestKey = key;
          }
        }
      }
      if (best) {
        order.push((best.waiting[best.taken] as Waiting).id);
        best.taken++;
        best.running++;
        best.lastStarted = ++clock;
        running++;
        runningKeys.push(bestKey);
        continue;
      }
      // Nothing can start: the oldest running item ends.
      const ended = runningKeys.shift();
      if (ended === undefined) break;
      const state = keys.get(ended);
      if (state) state.running--;
      running--;
    }
    return order;
  }

  private dispatch(): void {
    while (this.running < this.options.slots) {
      let chosen: KeyState | undefined;
      let chosenKey = '';
      for (const [key, state] of this.keys) {
        if (state.waiting.length === 0 || state.running >= this.options.perKey) continue;
        if (!chosen || before(state, chosen)) {
          chosen = state;
          chosenKey = key;
        }
      }
      if (!chosen) return;
      const next = chosen.waiting.shift() as Waiting;
      this.waitingKey.delete(next.id);
      chosen.running++;
      this.running++;
      this.runningKeys.push(chosenKey);
      chosen.lastStarted = ++this.starts;
      next.start();
    }
  }

  private state(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      // Never started anything: first among equals, in the order such keys came.
      state = { running: 0, waiting: [], lastStarted: 0 };
      this.keys.set(key, state);
    }
    return state;
  }

  /**
   * A key's last start is remembered while it is idle, so that a key coming back after its
   * turn does not go before keys that have not had one. Keys are accounts, few; should there
   * ever be many, the idle ones are forgotten.
   */
  private forgetIdleKeys(): void {
    if (this.keys.size <= IDLE_KEYS_KEPT) return;
    for (const [key, state] of this.keys)
      if (state.running === 0 && state.waiting.length === 0) this.keys.delete(key);
  }
}

interface SimulatedKey {
  waiting: readonly Waiting[];
  running: number;
  lastStarted: number;
  /** Waiting items the simulation has started. */
  taken: number;
}

/** Fewer running first; among equals, the key that started something least recently. */
function before(
  a: { running: number; lastStarted: number },
  b: { running: number; lastStarted: number },
): boolean {
  return a.running < b.running || (a.running === b.running && a.lastStarted < b.lastStarted);
}
