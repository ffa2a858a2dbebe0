/**
 * Work shared by the callers of one turn of the event loop: the first caller for a key schedules `run` at the end
 * of the turn (setImmediate), and every caller for that key until then gets the same promise. Once `run` has
 * started, a caller waits for a run of its own: so every caller is answered by work that began after it asked —
 * a read shared this way is never older than the request it answers — while a burst of requests for the same thing
 * (50 readers of one list) makes one read, not one each.
 */
export class TurnShared<K, V> {
  private readonly pending = new Map<K, Promise<V>>();

  get(key: K, run: () => Promise<V>): Promise<V> {
    const waiting = this.pending.get(key);
    if (waiting) return waiting;
    const shared = new Promise<V>((resolve, reject) => {
      setImmediate(() => {
        this.pending.delete(key);
        try {
          run().then(resolve, reject);
        } catch (err) {
          reject(err);
        }
      });
    });
    this.pending.set(key, shared);
    return shared;
  }
}
