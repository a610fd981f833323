/**
 * The first `k` of a stream of items in a total order, without sorting the rest: a binary heap whose root is the worst
 * kept, O(n log k). The ranker's page of hits and the encoder's fused page use it.
 */
export class TopK<T> {
  private readonly heap: T[] = [];
  constructor(
    private readonly k: number,
    private readonly order: (a: T, b: T) => number,
  ) {}
  offer(x: T): void {
    const h = this.heap;
    if (this.k <= 0) return;
    if (h.length < this.k) {
      h.push(x);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (this.order(h[i], h[p]) <= 0) break;
        [h[i], h[p]] = [h[p], h[i]];
        i = p;
      }
    } else if (this.order(x, h[0]) < 0) {
      h[0] = x;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let worst = i;
        if (l < h.length && this.order(h[l], h[worst]) > 0) worst = l;
        if (r < h.length && this.order(h[r], h[worst]) > 0) worst = r;
        if (worst === i) break;
        [h[i], h[worst]] = [h[worst], h[i]];
        i = worst;
      }
    }
  }
  /** The worst item kept once `k` are kept (an item not better than it would not be kept), else undefined. */
  worstKept(): T | undefined {
    return this.heap.length >= this.k ? this.heap[0] : undefined;
  }
  /** What was kept, best first. */
  sorted(): T[] {
    return [...this.heap].sort(this.order);
  }
}
