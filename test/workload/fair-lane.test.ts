import { describe, expect, it } from 'vitest';
import { FairLane, LaneFullError } from '../../src/workload/fair-lane.js';

/**
 * The lane's decisions, without a database: who starts when a slot frees, what a key may
 * hold, and that the queue position it shows is the order items really start in.
 */

/** A lane whose started items are recorded, and can be finished by id. */
function lane(slots: number, perKey: number, queuedPerKey = Number.POSITIVE_INFINITY) {
  const fair = new FairLane({ slots, perKey, queuedPerKey });
  const started: string[] = [];
  const keyOf = new Map<string, string>();
  return {
    fair,
    started,
    add(key: string, id: string) {
      keyOf.set(id, key);
      fair.enqueue(key, id, () => started.push(id));
    },
    finish(id: string) {
      fair.finished(keyOf.get(id) as string);
    },
  };
}

describe('FairLane', () => {
  it('starts at once while slots are free, up to the per-key cap', () => {
    const l = lane(4, 2);
    for (const id of ['a1', 'a2', 'a3']) l.add('a', id);
    l.add('b', 'b1');
    expect(l.started).toEqual(['a1', 'a2', 'b1']);
    expect(l.fair.runningCount).toBe(3);
    expect(l.fair.position('a3')).toBe(1);
  });

  it('gives a key with nothing running the next slot, before a key already running', () => {
    const l = lane(2, 2);
    for (const id of ['a1', 'a2', 'a3', 'a4']) l.add('a', id);
    l.add('b', 'b1');
    expect(l.started).toEqual(['a1', 'a2']);
    // b1 came after a3 and a4, but b runs nothing: it goes first.
    expect(l.fair.position('b1')).toBe(1);
    expect(l.fair.position('a3')).toBe(2);
    l.finish('a1');
    expect(l.started.at(-1)).toBe('b1');
  });

  it('lets keys take turns, however many items one of them sends', () => {
    const l = lane(1, 1);
    l.add('a', 'a0');
    for (let i = 1; i <= 5; i++) l.add('a', `a${i}`);
    l.add('b', 'b1');
    l.add('b', 'b2');
    l.add('c', 'c1');
    const order = [];
    while (l.fair.runningCount > 0) {
      const current = l.started.at(-1) as string;
      order.push(current);
      l.finish(current);
    }
    expect(order).toEqual(['a0', 'b1', 'c1', 'a1', 'b2', 'a2', 'a3', 'a4', 'a5']);
  });

  it('shows positions in the order items really start, for every prefix of a random workload', () => {
    for (let seed = 1; seed <= 50; seed++) {
      let state = seed;
      const random = (n: number) => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % n;
      };
      const l = lane(1 + random(3), 1 + random(2));
      const running: string[] = [];
      let counter = 0;
      for (let step = 0; step < 40; step++) {
        if (random(3) > 0 || running.length === 0) {
          l.add(`k${random(4)}`, `i${counter++}`);
        } else {
          l.finish(running.splice(random(running.length), 1)[0] as string);
        }
        running.push(...l.started.splice(0));
      }
      // Predicted: waiting items by position. Then finish one at a time, oldest running first.
      const waiting = [...Array(counter).keys()].map((i) => `i${i}`).filter((id) => l.fair.position(id));
      const predicted = waiting.sort(
        (x, y) => (l.fair.position(x) as number) - (l.fair.position(y) as number),
      );
      const actual: string[] = [];
      while (running.length > 0) {
        l.finish(running.shift() as string);
        const now = l.started.splice(0);
        actual.push(...now);
        running.push(...now);
      }
      expect({ seed, order: actual }).toEqual({ seed, order: predicted });
    }
  });

  it('refuses a key whose waiting items are at the bound, and only that key', () => {
    const l = lane(1, 1, 2);
    l.add('a', 'a1');
    l.add('a', 'a2');
    l.add('a', 'a3');
    expect(() => l.add('a', 'a4')).toThrow(LaneFullError);
    expect(l.fair.isFull('a')).toBe(true);
    l.add('b', 'b1');
    expect(l.fair.position('b1')).toBe(1);
  });

  it('withdraws a waiting item, never a running one', () => {
    const l = lane(1, 1);
    l.add('a', 'a1');
    l.add('a', 'a2');
    expect(l.fair.withdraw('a1')).toBe(false);
    expect(l.fair.withdraw('a2')).toBe(true);
    expect(l.fair.position('a2')).toBeUndefined();
    l.finish('a1');
    expect(l.fair.runningCount).toBe(0);
    expect(l.fair.waitingOf('a')).toBe(0);
    expect(() => l.fair.finished('a')).toThrow(/no item of a is running/);
  });

  it('does not let a key that just had its turn go before keys that had none', () => {
    const l = lane(1, 1);
    l.add('a', 'a1');
    l.add('b', 'b1');
    l.finish('a1');
    // a comes back at once, while b1 runs, before c's first item.
    l.add('a', 'a2');
    l.add('c', 'c1');
    expect(l.fair.position('c1')).toBe(1);
    expect(l.fair.position('a2')).toBe(2);
    l.add('b', 'b2');
    expect(l.fair.position('b2')).toBe(3);
  });

  it('clears the waiting items at shutdown without starting them', () => {
    const l = lane(1, 1);
    l.add('a', 'a1');
    l.add('b', 'b1');
    expect(l.fair.clearWaiting()).toEqual(['b1']);
    l.finish('a1');
    expect(l.started).toEqual(['a1']);
  });
});
